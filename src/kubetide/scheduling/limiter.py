"""How many new nodes one estimation may add, and for how long: Cluster Autoscaler's
``thresholdBasedEstimationLimiter``.

Each threshold gives a node limit and a duration limit; they combine with :func:`min_limit` (any
negative → -1, meaning nothing is allowed; 0 means unlimited; else the smallest). The limiter grants a
node while the count is below the limit and the duration has not run out. Time comes from an injected
clock, so the core never reads the wall clock; without a clock, duration limits are not enforced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "ClusterCapacityThreshold",
    "NodeGroupCapacityThreshold",
    "StaticThreshold",
    "Threshold",
    "ThresholdLimiter",
    "min_limit",
]

Clock = Callable[[], float]


def min_limit(a: float, b: float) -> float:
    """Combine two limits: any negative wins as -1, 0 is 'no limit', otherwise the smaller."""
    if a < 0 or b < 0:
        return -1
    if a == 0:
        return b
    if b == 0:
        return a
    return min(a, b)


class Threshold(Protocol):
    def node_limit(self) -> int:
        """Max new nodes: 0 unlimited, negative none."""
        ...

    def duration_limit(self) -> float:
        """Max seconds: 0 unlimited, negative none."""
        ...


@dataclass(frozen=True, slots=True)
class StaticThreshold:
    """``--max-nodes-per-scaleup`` (1000) and ``--max-nodegroup-binpacking-duration`` (10 s)."""

    max_nodes: int = 1000
    max_duration_s: float = 10.0

    def node_limit(self) -> int:
        return self.max_nodes

    def duration_limit(self) -> float:
        return self.max_duration_s


@dataclass(frozen=True, slots=True)
class NodeGroupCapacityThreshold:
    """Room left in the node group and its similar groups: sum of ``max(0, max - target)`` over
    ``(max_size, target_size)`` pairs, or -1 when there is none."""

    groups: Sequence[tuple[int, int]]

    def node_limit(self) -> int:
        room = sum(max(0, mx - target) for mx, target in self.groups)
        return room if room > 0 else -1

    def duration_limit(self) -> float:
        return 0.0


@dataclass(frozen=True, slots=True)
class ClusterCapacityThreshold:
    """``--max-nodes-total``: 0 unset; -1 once the cluster has that many nodes."""

    max_nodes_total: int
    current_nodes: int

    def node_limit(self) -> int:
        if self.max_nodes_total == 0:
            return 0
        if self.max_nodes_total <= self.current_nodes:
            return -1
        return self.max_nodes_total - self.current_nodes

    def duration_limit(self) -> float:
        return 0.0


class ThresholdLimiter:
    """Grants new nodes during one estimation; call :meth:`start` before each estimation."""

    def __init__(self, thresholds: Sequence[Threshold] = (), clock: Clock | None = None) -> None:
        self.thresholds = tuple(thresholds)
        self.clock = clock
        self.nodes = 0
        self.max_nodes: float = 0
        self.max_duration: float = 0
        self._start: float | None = None

    def start(self) -> None:
        self.nodes = 0
        self.max_nodes = 0
        self.max_duration = 0
        for t in self.thresholds:
            self.max_nodes = min_limit(self.max_nodes, t.node_limit())
            self.max_duration = min_limit(self.max_duration, t.duration_limit())
        self._start = self.clock() if self.clock is not None else None

    def permission_to_add_node(self) -> bool:
        if self.max_nodes < 0 or (self.max_nodes > 0 and self.nodes >= self.max_nodes):
            return False
        if self.max_duration < 0:
            return False
        timed = self.max_duration > 0 and self.clock is not None and self._start is not None
        if timed and self.clock() - self._start > self.max_duration:  # type: ignore[misc,operator]
            return False
        self.nodes += 1
        return True

    @property
    def exhausted(self) -> bool:
        """True once the node limit is reached (further requests would be refused)."""
        return self.max_nodes < 0 or (self.max_nodes > 0 and self.nodes >= self.max_nodes)
