"""What one tick of the Escalator loop did, as frozen values: per group, its decision, the calls made
(or, in dry mode, the ones that would have been), its errors and its memory; for the tick, every
error, Escalator's metrics as plain values, and log lines in Escalator's words.

The live command logs ``log_lines()``, exports ``metrics`` and ``observations`` and counts
``dry_run_actions``; the simulator turns the actions into its event log; tests read all of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubetide.escalator.config import NodeGroupOptions
from kubetide.escalator.decision import EscalatorDecision
from kubetide.escalator.executor import Action, Execution
from kubetide.escalator.samples import Sample
from kubetide.escalator.state import GroupMemory

__all__ = ["GroupRun", "TickResult"]


@dataclass(frozen=True, slots=True)
class GroupRun:
    """One group in one tick. ``decision`` is None when the group could not run at all (its cloud
    group is missing or unreadable); ``error`` is then why, else the decision's own error."""

    group: str
    decision: EscalatorDecision | None
    execution: Execution
    error: str | None = None
    memory: GroupMemory = field(default_factory=GroupMemory)  # what the group remembers next tick
    before: GroupMemory = field(default_factory=GroupMemory)  # what it remembered at the start
    options: NodeGroupOptions | None = None  # as the run used them (min/max discovered from the cloud)
    pods: int = 0  # the group's pods (bound or not) this tick
    unhealthy: frozenset[str] = frozenset()  # nodes found unhealthy (tainted first), health check on

    @property
    def errors(self) -> tuple[str, ...]:
        own = (self.error,) if self.error else ()
        notes = self.decision.notes if self.decision is not None else ()
        return own + notes + tuple(a.error for a in self.execution.errors if a.error)


@dataclass(frozen=True, slots=True)
class TickResult:
    now: float
    groups: tuple[GroupRun, ...] = ()
    errors: tuple[str, ...] = ()  # every error of the tick, each prefixed with its group
    metrics: tuple[Sample, ...] = ()  # every series' current value (gauges, counters' running totals)
    observations: tuple[Sample, ...] = ()  # histogram observations made in this tick

    @property
    def decisions(self) -> tuple[EscalatorDecision, ...]:
        return tuple(g.decision for g in self.groups if g.decision is not None)

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(a for g in self.groups for a in g.execution.actions)

    @property
    def dry_run_actions(self) -> tuple[Action, ...]:
        """What dry mode would have done (``kubetide_dry_run_actions_total{action}`` counts these)."""
        return tuple(a for a in self.actions if a.dry_run)

    def log_lines(self) -> tuple[str, ...]:
        """One line per group (its delta and why) and one per action or error, for the live log."""
        lines: list[str] = []
        for g in self.groups:
            d = g.decision
            why = "; ".join(d.reasons) if d is not None else ""
            lines.append(f"nodegroup={g.group} delta={d.delta if d else 0} {why}".rstrip())
            for a in g.execution.actions:
                state = "drymode " if a.dry_run else ""
                outcome = f"failed: {a.error}" if a.error else "ok"
                lines.append(f"nodegroup={g.group} {state}{a.kind} {a.target} x{a.count}: {outcome}")
            notes = ((g.error,) if g.error else ()) + (d.notes if d is not None else ())
            lines += [f"nodegroup={g.group} error: {e}" for e in notes]
        return tuple(lines)
