"""How busy a node is, as Cluster Autoscaler's scale-down eligibility measures it (``utilization.Calculate``).

Without a GPU: for cpu and memory, the sum of the pods' effective requests over allocatable; the
larger ratio is the node's utilization and names the resource. DaemonSet and mirror pods can be left
out (their requests then also come off allocatable), and long-terminating pods never count. With a GPU
(the provider names the GPU resource), only GPU requests over GPU allocatable count, and a GPU node
whose GPUs are not (yet) allocatable reports 0 so it can be removed.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, MEMORY

__all__ = [
    "Utilization",
    "UtilizationMemo",
    "is_daemonset_pod",
    "is_long_terminating",
    "is_mirror_pod",
    "node_utilization",
]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
DAEMONSET_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"
DEFAULT_GRACE_S = 30.0
LONG_TERMINATING_EXTRA_S = 30.0


def is_mirror_pod(pod: Pod) -> bool:
    return MIRROR_ANNOTATION in pod.annotations


def is_daemonset_pod(pod: Pod) -> bool:
    ctrl = pod.controller
    return (ctrl is not None and ctrl.kind == "DaemonSet") or pod.annotations.get(
        DAEMONSET_ANNOTATION
    ) == "true"


def is_long_terminating(pod: Pod, now: float, grace_s: float | None = None) -> bool:
    """Deleted longer ago than its grace period (default 30 s) plus 30 s."""
    if pod.deletion_time is None:
        return False
    grace = DEFAULT_GRACE_S if grace_s is None else grace_s
    return pod.deletion_time + grace + LONG_TERMINATING_EXTRA_S < now


@dataclass(frozen=True, slots=True)
class Utilization:
    utilization: float
    cpu: float
    memory: float
    resource: str  # the resource that sets ``utilization``


def node_utilization(
    node: NodeView,
    pods: Iterable[Pod],
    now: float,
    *,
    gpu_resource: str | None = None,
    ignore_daemonsets: bool = False,
    ignore_mirror: bool = False,
) -> Utilization:
    """Raises ValueError when cpu or memory allocatable is missing or zero (upstream's error)."""
    if gpu_resource is not None:
        try:
            (gpu,) = _ratios(node, pods, now, (gpu_resource,), ignore_daemonsets, ignore_mirror)
        except ValueError:
            gpu = 0.0  # GPUs not (yet) allocatable: 0, so the node can still be removed
        return Utilization(gpu, 0.0, 0.0, gpu_resource)
    cpu, mem = _ratios(node, pods, now, (CPU, MEMORY), ignore_daemonsets, ignore_mirror)
    # As upstream compares (not max(): with a NaN, Go's comparison picks memory).
    if cpu > mem:
        return Utilization(cpu, cpu, mem, CPU)
    return Utilization(mem, cpu, mem, MEMORY)


def _ratios(
    node: NodeView,
    pods: Iterable[Pod],
    now: float,
    resources: tuple[str, ...],
    ignore_daemonsets: bool,
    ignore_mirror: bool,
) -> list[float]:
    """``CalculateUtilizationOfResource`` per resource, in one pass over the pods (this runs for
    every node of every loop): requests over allocatable, DaemonSet and mirror pods (when ignored)
    taken off allocatable (even when long-terminating: upstream checks those first), other
    long-terminating pods left out."""
    allocs = [node.allocatable[r] for r in resources]
    for r, alloc in zip(resources, allocs, strict=True):
        if alloc <= 0:
            raise ValueError(f"node {node.name} has no allocatable {r}")
    used = [0] * len(resources)
    skipped = [0] * len(resources)
    for p in pods:
        req = p.requests
        if (ignore_daemonsets and is_daemonset_pod(p)) or (ignore_mirror and is_mirror_pod(p)):
            for k, r in enumerate(resources):
                skipped[k] += req[r]
        elif p.deletion_time is None or not is_long_terminating(p, now):
            for k, r in enumerate(resources):
                used[k] += req[r]
    return [_go_divide(u, a - s) for u, a, s in zip(used, allocs, skipped, strict=True)]


def _go_divide(numerator: int, denominator: int) -> float:
    """Go's float64 division: by zero it is +Inf, -Inf or NaN, not an error (everything allocatable
    taken by ignored DaemonSet pods makes a node's utilization infinite, not a crash)."""
    if denominator == 0:
        if numerator == 0:
            return math.nan
        return math.inf if numerator > 0 else -math.inf
    return numerator / denominator


class UtilizationMemo:
    """:func:`node_utilization`'s answers kept from one loop to the next: a node whose view and pods
    are the very same objects as last time (views and pods are immutable), with the same settings,
    gets the same answer. The pods are the same when the caller gives the same version of them (a
    snapshot's ``pods_version``), or else (or when the version moved on) when they are the same
    objects in the same order. A node
    with a pod being deleted is computed afresh: the answer then depends on the time."""

    def __init__(self) -> None:
        self._kept: dict[
            str, tuple[NodeView, list[Pod], list[int] | None, int | None, tuple[object, ...], Utilization]
        ] = {}

    def utilization(
        self,
        node: NodeView,
        pods: Sequence[Pod],
        now: float,
        *,
        gpu_resource: str | None = None,
        ignore_daemonsets: bool = False,
        ignore_mirror: bool = False,
        version: int | None = None,
    ) -> Utilization:
        settings = (gpu_resource, ignore_daemonsets, ignore_mirror)
        kept = self._kept.get(node.name)
        # The pods' identity: the version when given (cheap), else the ids of the pods in order.
        ids = list(map(id, pods)) if version is None else None
        same_pods = kept is not None and (kept[3] == version if version is not None else kept[2] == ids)
        if kept is not None and not same_pods and version is not None:
            # Another version of the very same pods (pods taken off and bound again, as fake pods are
            # every loop): the same answer, kept under the new version.
            same_pods = len(kept[1]) == len(pods) and all(map(operator.is_, kept[1], pods))
            if same_pods and kept[0] is node and kept[4] == settings:
                self._kept[node.name] = (*kept[:3], version, *kept[4:])
        if kept is not None and same_pods and kept[0] is node and kept[4] == settings:
            return kept[5]
        util = node_utilization(
            node,
            pods,
            now,
            gpu_resource=gpu_resource,
            ignore_daemonsets=ignore_daemonsets,
            ignore_mirror=ignore_mirror,
        )
        if all(p.deletion_time is None for p in pods):
            # The pods are held so their ids stay theirs while the ids are compared.
            self._kept[node.name] = (node, list(pods), ids, version, settings, util)
        else:
            self._kept.pop(node.name, None)
        return util

    def keep_only(self, names: Collection[str]) -> None:
        """Forget nodes that are gone (called once a loop with the nodes present)."""
        if len(self._kept) > len(names):
            self._kept = {name: kept for name, kept in self._kept.items() if name in names}
