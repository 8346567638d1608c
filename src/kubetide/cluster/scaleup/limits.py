"""How many new nodes the cluster-wide limits allow (CA spec §6.5, §6.7).

``--cores-total`` / ``--memory-total`` (and GPU totals) bound the cluster's summed node *capacity*: for
scale-up, as upstream's ``ResourcesLeft`` counts it, each group's target size times its template plus
the ready nodes of no autoscaled group; ``--max-nodes-total`` bounds the ready nodes plus the upcoming
ones. A scale-up is cut to the largest count that fits every limit:
``min over exceeded resources of floor(left / per node)``. Scale-down uses the minimums instead.

``--gpu-total=<type>:<min>:<max>`` counts GPUs by *type* as CA 1.31's ``GpuCustomResourcesProcessor``
does (:func:`gpu_target`): a node's type is the value of the cloud's GPU label on it, its count its
allocatable ``nvidia.com/gpu`` (or, while its GPUs are not allocatable yet, its group template's
capacity). GPUs are counted only when a limit names a resource other than cpu and memory
(``ContainsCustomResources``). A total that cannot be known (a labelled node with no GPU allocatable
and no group) is :data:`UNKNOWN`: any node that adds or removes GPUs then exceeds it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubetide.cloud.instance import CloudProviderError, NotImplementedByProvider
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.gpu import GPU_RESOURCE
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.numbers import parse_ascii_int
from kubetide.model.resources import CPU, MEMORY, Resources

__all__ = [
    "CLUSTER_WIDE",
    "NODES",
    "UNKNOWN",
    "GpuTarget",
    "QuotaCheck",
    "ResourceLimits",
    "UnknownGpuTarget",
    "cap_by_max_nodes_total",
    "gpu_target",
    "gpu_usage",
    "node_resources",
    "parse_min_max",
]

CORES = "cpu"  # the limiter's cpu is whole cores
NODES = "nodes"
CLUSTER_WIDE = "cluster-wide"
GIB = 1 << 30
# A usage (or an amount left) that could not be computed: upstream's LimitUnknown / limitUnknown. Any
# positive delta of that resource exceeds it (CheckDeltaWithinLimits).
UNKNOWN = -(1 << 62)
GpuTarget = tuple[str, int]  # (GPU type, count): CustomResourceTarget


class UnknownGpuTarget(Exception):
    """``GetNodeGpuTarget``'s error: the node should have GPUs (its label says so), none is allocatable
    yet, and no group template tells how many."""


def gpu_target(node: NodeView, gpu_label: str, group: NodeGroup | None) -> GpuTarget | None:
    """``GpuCustomResourcesProcessor.GetNodeGpuTarget``: None for a node without the GPU label; else its
    GPU type (the label's value) and count: allocatable ``nvidia.com/gpu`` when above 0, else the
    capacity of ``group``'s template (``TemplateNodeInfo``). Raises :class:`UnknownGpuTarget` when that
    cannot be had."""
    kind = node.labels.get(gpu_label) if gpu_label else None
    if kind is None:
        return None
    allocatable = node.allocatable[GPU_RESOURCE]
    if allocatable > 0:
        return kind, int(allocatable)
    if group is None:
        raise UnknownGpuTarget(f"node {node.name} has the GPU label, no GPU and no node group")
    try:
        template = group.template_node_info()
    except (CloudProviderError, NotImplementedByProvider) as exc:
        raise UnknownGpuTarget(f"node group {group.id()}: no template ({exc})") from exc
    return kind, int(template.node.capacity[GPU_RESOURCE])


def gpu_usage(targets: Iterable[tuple[GpuTarget | None, int]]) -> dict[str, int]:
    """``customResourcesTotal``: each (target, how many nodes) summed by type; no type or no GPU skipped."""
    total: dict[str, int] = {}
    for target, count in targets:
        if target is None or not target[0] or target[1] == 0:
            continue
        total[target[0]] = total.get(target[0], 0) + target[1] * count
    return total


def parse_min_max(text: str) -> tuple[int, int]:
    """``"<min>:<max>"`` as CA's ``--cores-total`` / ``--memory-total`` take it."""
    lo, sep, hi = text.partition(":")
    if not sep:
        raise ValueError(f"expected <min>:<max>, got {text!r}")
    low, high = parse_ascii_int(lo), parse_ascii_int(hi)  # Go's strconv: ASCII digits, int64
    if low < 0 or high < low:
        raise ValueError(f"expected 0 <= min <= max, got {text!r}")
    return low, high


def node_resources(node: NodeView, gpu: GpuTarget | None = None) -> dict[str, int]:
    """What one node counts for (``DeltaForNode``): cores rounded up, memory bytes, 1 node, and its GPU
    target (:func:`gpu_target`) when GPUs are limited."""
    out = _counted(node.capacity)
    if gpu is not None:
        out[gpu[0]] = gpu[1]
    return out


def _counted(capacity: Resources) -> dict[str, int]:
    return {CORES: math.ceil(capacity[CPU] / 1000), MEMORY: capacity[MEMORY], NODES: 1}


@dataclass(frozen=True, slots=True)
class QuotaCheck:
    """``CheckQuota``: how many of the asked nodes fit, and the resources that ran out."""

    allowed: int
    exceeded: tuple[str, ...]

    def message(self, quota_message: bool = True) -> str:
        """The skip reason: CA 1.36's quota message, or (``quota_message`` False) 1.31's
        ``NewMaxResourceLimitReached`` over the sorted resources (``sets.NewString(...).List()``)."""
        if not quota_message:
            return f"max cluster {', '.join(sorted(self.exceeded))} limit reached"
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

    @property
    def gpus_limited(self) -> bool:
        """``ContainsCustomResources(GetResources())``: a limit names something other than cpu and memory."""
        return any(r not in (CORES, MEMORY) for r in (*self.minimum, *self.maximum))

    def unknown_gpus(self) -> dict[str, int]:
        """Every limited GPU type's usage as :data:`UNKNOWN` (``customResourcesTotal`` failed)."""
        return {r: UNKNOWN for r in (*self.minimum, *self.maximum) if r not in (CORES, MEMORY)}

    def usage(self, nodes: Iterable[NodeView]) -> dict[str, int]:
        """Cores, memory and nodes (GPUs are :func:`gpu_usage`'s)."""
        # A node counts for its capacity alone, and most nodes share a few capacities.
        return self.usage_of(Counter(n.capacity for n in nodes).items())

    def usage_of(self, capacities: Iterable[tuple[Resources, int]]) -> dict[str, int]:
        """The cores, memory and nodes of ``count`` nodes of each ``capacity``."""
        total: dict[str, int] = {}
        for capacity, count in capacities:
            for r, v in _counted(capacity).items():
                total[r] = total.get(r, 0) + count * v
        return total

    def check_quota(self, usage: Mapping[str, int], per_node: Mapping[str, int], count: int) -> QuotaCheck:
        allowed = count
        exceeded = []
        for r, amount in per_node.items():
            if amount <= 0 or r not in self.maximum:
                continue
            if usage.get(r, 0) == UNKNOWN:  # LimitUnknown: "limit unknown for resource"
                allowed = 0
                exceeded.append(r)
                continue
            left = max(0, self.maximum[r] - usage.get(r, 0))
            if left < amount * count:
                allowed = min(allowed, left // amount)
                exceeded.append(r)
        return QuotaCheck(allowed, tuple(exceeded))


def cap_by_max_nodes_total(new_nodes: int, current_nodes: int, max_nodes_total: int) -> tuple[int, bool]:
    """(allowed new nodes, whether the cap applied); 0 means off. Below 1 the scale-up fails."""
    if max_nodes_total > 0 and current_nodes + new_nodes > max_nodes_total:
        return max_nodes_total - current_nodes, True
    return new_nodes, False
