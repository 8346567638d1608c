"""Escalator's main loop, one tick at a time: upstream ``RunOnce``, shared by the simulator and live mode.

A tick refreshes the cloud, reads the world once, and for every configured group **in config order**
reads the cloud group's sizes, decides (:func:`escalator_scale_node_group`) with the group's
:class:`GroupMemory`, carries the decision out (:func:`execute_decision`) and keeps the next memory:
the decision's, or ``memory_if_increase_fails`` when the cloud refused the increase (no scale lock for
nodes that were never asked for). The memory lives in the driver only; :meth:`EscalatorDriver.restart`
forgets it, as a restarted Escalator does. What a restart must not forget is on the nodes: the removal
taint carries the Unix second it was added, so reaping resumes on time and nothing is tainted twice.

Unlike upstream, where a missing cloud group ends the process, a group that cannot run is reported
and the other groups still run. The :class:`TickResult` carries the decisions, what was executed
(or, in dry mode, what would have been), every error, and Escalator's metrics as plain values.
``now`` is an argument: no clock, no I/O but the three ports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import CloudProvider, NodeGroup
from kubetide.escalator.config import NodeGroupOptions, escalator_dry_mode
from kubetide.escalator.decision import EscalatorDecision, escalator_scale_node_group
from kubetide.escalator.executor import Action, ActionKind, Execution, GroupView, execute_decision
from kubetide.escalator.health import escalator_node_unhealthy
from kubetide.escalator.membership import group_nodes, group_pods, node_info_map
from kubetide.escalator.metrics import (
    CLOUD_MAX_SIZE,
    CLOUD_MIN_SIZE,
    CLOUD_SIZE,
    CLOUD_TARGET_SIZE,
    NODE_DELETE_ERRORS,
    PODS_EVICTED,
    RUN_COUNT,
    SCALE_LOCK,
    SCALE_LOCK_CHECK_WAS_LOCKED,
    SCALE_LOCK_DURATION,
    TAINT_EVENT,
    UNTAINT_EVENT,
    MetricKind,
    MetricValues,
    Sample,
    group_labels,
    run_gauges,
)
from kubetide.escalator.reasons import EventReason, Message, Reason
from kubetide.escalator.scale import AsgSnapshot
from kubetide.escalator.state import GroupMemory
from kubetide.escalator.world import EscalatorWorldSource
from kubetide.model.api import ClusterPort
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["EscalatorDriver", "GroupRun", "TickResult"]

_TERMINAL = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True)
class GroupRun:
    """One group in one tick. ``decision`` is None when the group could not run at all (its cloud
    group is missing or unreadable); ``error`` is then why, else the decision's own error."""

    group: str
    decision: EscalatorDecision | None
    execution: Execution
    error: str | None = None
    memory: GroupMemory = field(default_factory=GroupMemory)  # what the group remembers next tick
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


def _asg(cloud: NodeGroup) -> AsgSnapshot:
    return AsgSnapshot(cloud.min_size(), cloud.max_size(), cloud.target_size())


class EscalatorDriver:
    """Upstream's ``Controller``: the configured groups, their memories, and the ports it acts through.

    ``groups`` are validated options, in config order. ``dry_run`` is ``--drymode``: with it, or a
    group's ``dry_mode``, that group decides on its in-memory taint tracker and calls nothing.
    """

    def __init__(
        self,
        groups: Sequence[NodeGroupOptions],
        world: EscalatorWorldSource,
        cluster: ClusterPort,
        cloud: CloudProvider,
        *,
        dry_run: bool = False,
    ) -> None:
        self.groups = tuple(groups)
        self.world, self.cluster, self.cloud = world, cluster, cloud
        self.dry_run = dry_run
        self._memory: dict[str, GroupMemory] = {}
        self._metrics = MetricValues()

    def memory(self, group: str) -> GroupMemory:
        return self._memory.get(group, GroupMemory())

    def restart(self) -> None:
        """Forget every group's memory (scale lock, cached node size, dry-mode trackers)."""
        self._memory.clear()

    def tick(self, now: float) -> TickResult:
        errors: list[str] = []
        try:
            self.cloud.refresh()
        except CloudProviderError as exc:  # not fatal upstream either: the groups run on what it has
            errors.append(f"cloud provider failed to refresh: {exc}")
        nodes = tuple(self.world.nodes())
        pods = tuple(p for p in self.world.pods() if p.phase not in _TERMINAL)
        by_id = {g.id(): g for g in self.cloud.node_groups()}
        runs: list[GroupRun] = []
        observations: list[Sample] = []
        for opts in self.groups:
            run = self._run_group(opts, by_id.get(opts.cloud_provider_group_name), nodes, pods, now)
            runs.append(run)
            errors += [f"nodegroup {run.group}: {e}" for e in run.errors]
            observations += self._record(opts, run, now)
            self._memory[opts.name] = run.memory
        self._metrics.add(RUN_COUNT, (), 1.0)
        return TickResult(now, tuple(runs), tuple(errors), self._metrics.samples(), tuple(observations))

    def _run_group(
        self,
        opts: NodeGroupOptions,
        cloud: NodeGroup | None,
        nodes: Sequence[NodeView],
        pods: Sequence[Pod],
        now: float,
    ) -> GroupRun:
        dry = escalator_dry_mode(self.dry_run, opts)
        try:
            if cloud is None:
                raise CloudProviderError("could not find node group")  # upstream RunOnce's text
            asg = _asg(cloud)
            self._cloud_metrics(opts, cloud, asg)
        except CloudProviderError as exc:
            if not dry:
                self.cluster.emit_event("Warning", EventReason.RUN_FAILED, f"NodeGroup/{opts.name}", str(exc))
            return GroupRun(opts.name, None, Execution(opts.name), str(exc), self.memory(opts.name))
        before = self.memory(opts.name)
        decision = escalator_scale_node_group(
            opts, nodes, pods, asg, before, now, global_dry_mode=self.dry_run
        )
        effective = opts.with_discovered_min_max(asg.min_size, asg.max_size)
        gpods = group_pods(pods, effective)
        view = self._view(effective, nodes, gpods, before, now)
        execution = execute_decision(decision, view, self.cluster, cloud)
        memory = decision.memory
        if execution.increase_failed and decision.memory_if_increase_fails is not None:
            memory = decision.memory_if_increase_fails
        if decision.error and not dry:
            self.cluster.emit_event(
                "Warning", EventReason.RUN_FAILED, f"NodeGroup/{opts.name}", decision.error
            )
        if Reason.LOCKED in decision.reasons and not dry:
            message = Message.lock_held(decision.delta)
            self.cluster.emit_event("Normal", EventReason.SCALE_LOCK_HELD, f"NodeGroup/{opts.name}", message)
        return GroupRun(opts.name, decision, execution, decision.error, memory, len(gpods), view.unhealthy)

    @staticmethod
    def _view(
        opts: NodeGroupOptions,
        nodes: Sequence[NodeView],
        gpods: Sequence[Pod],
        before: GroupMemory,
        now: float,
    ) -> GroupView:
        mine = group_nodes(nodes, opts)
        grace = opts.unhealthy_node_grace_s
        unhealthy = (
            frozenset(n.name for n in mine if escalator_node_unhealthy(n, grace, now))
            if opts.health_check_enabled
            else frozenset()
        )
        pods_by_node = node_info_map(gpods, mine)
        return GroupView({n.name: n for n in mine}, pods_by_node, unhealthy, before)

    def _cloud_metrics(self, opts: NodeGroupOptions, cloud: NodeGroup, asg: AsgSnapshot) -> None:
        gid = cloud.id()
        labels = (("cloud_provider", self.cloud.name()), ("id", gid), ("node_group", gid))
        self._metrics.set(CLOUD_MIN_SIZE, labels, float(asg.min_size))
        self._metrics.set(CLOUD_MAX_SIZE, labels, float(asg.max_size))
        self._metrics.set(CLOUD_TARGET_SIZE, labels, float(asg.target_size))
        self._metrics.set(CLOUD_SIZE, labels, float(len(cloud.nodes())))

    def _record(self, opts: NodeGroupOptions, run: GroupRun, now: float) -> list[Sample]:
        """Update the metrics as upstream's run of this group would; return histogram observations."""
        d, labels, m = run.decision, group_labels(opts.name), self._metrics
        if d is None:
            return []
        before = self.memory(opts.name)  # called before the run's memory is kept
        m.set_all(run_gauges(d, run.pods), labels)
        reasons = set(d.reasons)
        if Reason.LOCKED in reasons:
            # Twice per locked run: upstream checks locked() again when it logs the lock (String()).
            m.add(SCALE_LOCK_CHECK_WAS_LOCKED, labels, 2.0)
        sizing_up = Reason.BELOW_MIN_UNTAINTED in reasons or (d.delta > 0 and Reason.LOCKED not in reasons)
        if sizing_up and d.buckets.tainted:
            requested = (
                opts.min_nodes - len(d.buckets.untainted)
                if Reason.BELOW_MIN_UNTAINTED in reasons
                else d.delta
            )
            m.add(UNTAINT_EVENT, labels, float(requested), MetricKind.GAUGE)
        if d.delta < 0 and not d.notes:  # upstream adds the count it is about to taint
            scale_down = [
                a
                for a in run.execution.actions
                if a.kind is ActionKind.TAINT and a.target not in run.unhealthy
            ]
            m.add(TAINT_EVENT, labels, float(len(scale_down)), MetricKind.GAUGE)
        out: list[Sample] = []
        if before.lock.is_locked and not run.memory.lock.is_locked and before.lock.lock_time is not None:
            m.set(SCALE_LOCK, labels, 0.0)
            duration = now - before.lock.lock_time
            out.append(Sample(SCALE_LOCK_DURATION, labels, duration, MetricKind.HISTOGRAM))
        if run.memory.lock.is_locked and run.memory.lock.lock_time == now:
            m.add(SCALE_LOCK, labels, 1.0, MetricKind.GAUGE)
        if run.execution.pods_evicted:
            m.add(PODS_EVICTED, labels, float(run.execution.pods_evicted))
        for a in run.execution.errors:
            if a.kind is ActionKind.DELETE:
                m.add(NODE_DELETE_ERRORS, (("node_group", opts.name), ("node", a.target)), 1.0)
        return out
