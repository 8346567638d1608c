"""How many new nodes the cluster-wide limits allow (CA spec §6.5, §6.7).

``--cores-total`` / ``--memory-total`` (and GPU totals) bound the cluster's summed node *capacity*: for
scale-up, as upstream's ``ResourcesLeft`` counts it, each group's target size times its template plus
the ready nodes of no autoscaled group; ``--max-nodes-total`` bounds the ready nodes plus the upcoming
ones. A scale-up is cut to the largest count that fits every limit:
``min over exceeded resources of floor(left / per node)``. Scale-down uses the minimums instead.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.numbers import parse_ascii_int
from kubetide.model.resources import CPU, MEMORY, Resources

__all__ = [
    "CLUSTER_WIDE",
    "NODES",
    "QuotaCheck",
    "ResourceLimits",
    "cap_by_max_nodes_total",
    "node_resources",
    "parse_min_max",
]

CORES = "cpu"  # the limiter's cpu is whole cores
NODES = "nodes"
CLUSTER_WIDE = "cluster-wide"
GIB = 1 << 30


def parse_min_max(text: str) -> tuple[int, int]:
    """``"<min>:<max>"`` as CA's ``--cores-total`` / ``--memory-total`` take it."""
    lo, sep, hi = text.partition(":")
    if not sep:
        raise ValueError(f"expected <min>:<max>, got {text!r}")
    low, high = parse_ascii_int(lo), parse_ascii_int(hi)  # Go's strconv: ASCII digits, int64
    if low < 0 or high < low:
        raise ValueError(f"expected 0 <= min <= max, got {text!r}")
    return low, high


def node_resources(node: NodeView, extra: Iterable[str] = ()) -> dict[str, int]:
    """What one node counts for: cores rounded up, memory bytes, listed extras (GPUs), 1 node."""
    return _counted(node.capacity, extra)


def _counted(capacity: Resources, extra: Iterable[str]) -> dict[str, int]:
    out = {CORES: math.ceil(capacity[CPU] / 1000), MEMORY: capacity[MEMORY], NODES: 1}
    for name in extra:
        out[name] = capacity[name]
    return out


@dataclass(frozen=True, slots=True)
class QuotaCheck:
    """``CheckQuota``: how many of the asked nodes fit, and the resources that ran out."""

    allowed: int
    exceeded: tuple[str, ...]

    @property
    def message(self) -> str:
        return f'exceeded quota: "{CLUSTER_WIDE}", resources: {", ".join(self.exceeded)}'


@dataclass(frozen=True, slots=True)
class ResourceLimits:
    """Min and max per resource (``cpu`` in cores, ``memory`` in bytes, GPUs by type)."""

    minimum: Mapping[str, int]
    maximum: Mapping[str, int]

    @classmethod
    def from_options(cls, options: AutoscalingOptions) -> ResourceLimits:
        cmin, cmax = parse_min_max(options.cores_total)
        mmin, mmax = parse_min_max(options.memory_total)
        lo = {CORES: cmin, MEMORY: mmin * GIB}
        hi = {CORES: cmax, MEMORY: mmax * GIB}
        for item in options.gpu_total:
            kind, gmin, gmax = item.split(":")
            lo[kind], hi[kind] = int(gmin), int(gmax)
        return cls(lo, hi)

    def usage(self, nodes: Iterable[NodeView]) -> dict[str, int]:
        # A node counts for its capacity alone, and most nodes share a few capacities.
        return self.usage_of(Counter(n.capacity for n in nodes).items())

    def usage_of(self, capacities: Iterable[tuple[Resources, int]]) -> dict[str, int]:
        """The usage of ``count`` nodes of each ``capacity``."""
        total: dict[str, int] = {}
        extras = [r for r in self.maximum if r not in (CORES, MEMORY)]
        for capacity, count in capacities:
            for r, v in _counted(capacity, extras).items():
                total[r] = total.get(r, 0) + count * v
        return total

    def check_quota(self, usage: Mapping[str, int], per_node: Mapping[str, int], count: int) -> QuotaCheck:
        allowed = count
        exceeded = []
        for r, amount in per_node.items():
            if amount <= 0 or r not in self.maximum:
                continue
            left = max(0, self.maximum[r] - usage.get(r, 0))
            if left < amount * count:
                allowed = min(allowed, left // amount)
                exceeded.append(r)
        return QuotaCheck(allowed, tuple(exceeded))

    def within_minimum(self, usage: Mapping[str, int], removed: Mapping[str, int]) -> bool:
        """Scale-down: every usage stays at or above its minimum once ``removed`` is gone."""
        return all(
            usage.get(r, 0) - v >= self.minimum.get(r, 0) for r, v in removed.items() if r in self.minimum
        )


def cap_by_max_nodes_total(new_nodes: int, current_nodes: int, max_nodes_total: int) -> tuple[int, bool]:
    """(allowed new nodes, whether the cap applied); 0 means off. Below 1 the scale-up fails."""
    if max_nodes_total > 0 and current_nodes + new_nodes > max_nodes_total:
        return max_nodes_total - current_nodes, True
    return new_nodes, False
