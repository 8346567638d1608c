"""How busy a node is, as Cluster Autoscaler's scale-down eligibility measures it (``utilization.Calculate``).

Without a GPU: for cpu and memory, the sum of the pods' effective requests over allocatable; the
larger ratio is the node's utilization and names the resource. DaemonSet and mirror pods can be left
out (their requests then also come off allocatable), and long-terminating pods never count. With a GPU
(the provider names the GPU resource), only GPU requests over GPU allocatable count, and a GPU node
whose GPUs are not (yet) allocatable reports 0 so it can be removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, MEMORY

__all__ = ["Utilization", "is_daemonset_pod", "is_long_terminating", "is_mirror_pod", "node_utilization"]

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
        pods = [p for p in pods if p.deletion_time is None or not is_long_terminating(p, now)]
        alloc = node.allocatable[gpu_resource]
        used = sum(p.requests[gpu_resource] for p in pods)
        util = used / alloc if alloc > 0 else 0.0
        return Utilization(util, 0.0, 0.0, gpu_resource)
    cpu_alloc, mem_alloc = node.allocatable[CPU], node.allocatable[MEMORY]
    for name, alloc in ((CPU, cpu_alloc), (MEMORY, mem_alloc)):
        if alloc <= 0:
            raise ValueError(f"node {node.name} has no allocatable {name}")
    # One pass for both resources: this runs for every node of every loop.
    cpu_used = mem_used = cpu_skipped = mem_skipped = 0
    skipping = ignore_daemonsets or ignore_mirror
    for p in pods:
        if p.deletion_time is not None and is_long_terminating(p, now):
            continue
        req = p.requests
        if skipping and ((ignore_daemonsets and is_daemonset_pod(p)) or (ignore_mirror and is_mirror_pod(p))):
            cpu_skipped += req[CPU]
            mem_skipped += req[MEMORY]
        else:
            cpu_used += req[CPU]
            mem_used += req[MEMORY]
    cpu, mem = cpu_used / (cpu_alloc - cpu_skipped), mem_used / (mem_alloc - mem_skipped)
    return Utilization(max(cpu, mem), cpu, mem, CPU if cpu > mem else MEMORY)
