"""What carrying out a plan did: :class:`LoopOutcome`, recorded by the actuator
(:mod:`kubetide.cluster.loop.actuator`) and read by the autoscaler to decide the loop's next phase.

Each write the plan asks for is made, or fails; the outcome says which (``failures``, with the error),
with the events of the actions in the order they happened, the counters CA exports, and what the next
phase depends on (the nodes whose taint was removed, the groups scaled up, the deletions started).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubetide.cluster.loop.world import CAEvent, LoopStats
from kubetide.cluster.scaleup.balance import ScaleUpInfo
from kubetide.model.node import NodeView

__all__ = ["Failure", "LoopOutcome"]


@dataclass(frozen=True, slots=True)
class Failure:
    """One action that failed: what it was (``action``: the port call), on what, and the error."""

    action: str
    target: str
    error: str


@dataclass
class LoopOutcome:
    """The outcome of one execution; :meth:`add` appends a later one (the loop's phases)."""

    events: list[CAEvent] = field(default_factory=list)
    stats: LoopStats = field(default_factory=LoopStats)
    failures: list[Failure] = field(default_factory=list)
    # CA's scaled_down_nodes_total{reason}, failed_scale_ups_total{reason}, evicted_pods_total{eviction_result}.
    scaled_down: dict[str, int] = field(default_factory=dict)
    failed_scale_ups: dict[str, int] = field(default_factory=dict)
    evictions: dict[str, int] = field(default_factory=dict)
    api_errors: int = 0
    # Nodes whose taint an action removed (the loop's view of them changes).
    untainted: dict[str, str] = field(default_factory=dict)  # node -> the taint key removed
    size_fixed: list[str] = field(default_factory=list)  # groups whose target a size fix lowered
    scaled_up: list[ScaleUpInfo] = field(default_factory=list)  # scale-up groups raised, in order
    scale_up_failed: bool = False  # an IncreaseSize of the scale-up failed (the loop's result: Error)
    # Groups an all-or-nothing scale-up raised with IncreaseSize (the provider has no atomic increase).
    atomic_fallbacks: list[str] = field(default_factory=list)
    # Group -> how the provider made its atomic increase all-or-nothing (or not), where it says.
    atomic_routes: dict[str, str] = field(default_factory=dict)
    raised_to_min: list[str] = field(default_factory=list)  # groups raised to their min size
    # Deletions the scale-down started (tainted), as (node view with the taint, its plan entry index).
    started: list[tuple[NodeView, int]] = field(default_factory=list)
    taint_failed: bool = False  # a ToBeDeleted taint was refused: the scale-down's result is Error
    failed_deletions: list[str] = field(default_factory=list)  # deletions that failed (drain or cloud)
    deleted: list[str] = field(default_factory=list)  # nodes whose DeleteNodes was called and succeeded
    # The earliest time a deletion in progress takes its next step (None: none waits).
    deletions_due_at: float | None = None

    def count(self, counts: dict[str, int], key: str, n: int = 1) -> None:
        counts[key] = counts.get(key, 0) + n

    def due(self, at: float) -> None:
        waiting = self.deletions_due_at
        self.deletions_due_at = at if waiting is None else min(waiting, at)

    def fail(self, action: str, target: str, error: object) -> None:
        self.failures.append(Failure(action, target, str(error)))

    def add(self, later: LoopOutcome) -> None:
        self.events += later.events
        self.stats.add(later.stats)
        self.failures += later.failures
        for mine, theirs in (
            (self.scaled_down, later.scaled_down),
            (self.failed_scale_ups, later.failed_scale_ups),
            (self.evictions, later.evictions),
        ):
            _add(mine, theirs)
        self.api_errors += later.api_errors
        self.untainted.update(later.untainted)
        self.size_fixed += later.size_fixed
        self.scaled_up += later.scaled_up
        self.atomic_fallbacks += later.atomic_fallbacks
        self.atomic_routes.update(later.atomic_routes)
        self.scale_up_failed = self.scale_up_failed or later.scale_up_failed
        self.raised_to_min += later.raised_to_min
        self.started += later.started
        self.taint_failed = self.taint_failed or later.taint_failed
        self.failed_deletions += later.failed_deletions
        self.deleted += later.deleted
        if later.deletions_due_at is not None:
            self.due(later.deletions_due_at)


def _add(counts: dict[str, int], more: Mapping[str, int]) -> None:
    for key, n in more.items():
        counts[key] = counts.get(key, 0) + n
