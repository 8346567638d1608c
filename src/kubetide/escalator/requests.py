"""Requests and capacity of a node group: the only inputs of Escalator's utilisation (spec §4.1, §4.2, §4.5).

A pod's request is the sum of its regular containers, raised per resource to any larger init
container, plus ``spec.overhead``; sidecar (restartable) init containers get no special treatment,
unlike kube-scheduler. Capacity is the allocatable of untainted nodes. The starvation inputs (the
largest pending pod, the node with the most free room) come from the same pass.
Units: CPU in millicores, memory in bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = [
    "ZERO",
    "CpuMem",
    "NodeCapacity",
    "PodRequests",
    "escalator_node_capacity",
    "escalator_pod_request",
    "escalator_pod_requests",
]


class CpuMem(NamedTuple):
    cpu_m: int = 0
    mem_bytes: int = 0

    def __add__(self, other: tuple[int, ...]) -> CpuMem:  # type: ignore[override]
        return CpuMem(self.cpu_m + other[0], self.mem_bytes + other[1])

    def is_empty(self) -> bool:
        return self.cpu_m == 0 and self.mem_bytes == 0


ZERO = CpuMem()


def escalator_pod_request(pod: Pod) -> CpuMem:
    """Upstream's per-pod request: containers summed, max'ed with each init container, plus overhead."""
    cpu = sum(c.requests["cpu"] for c in pod.containers)
    mem = sum(c.requests["memory"] for c in pod.containers)
    for init in pod.init_containers:
        cpu = max(cpu, init.requests["cpu"])
        mem = max(mem, init.requests["memory"])
    return CpuMem(cpu + pod.overhead["cpu"], mem + pod.overhead["memory"])


@dataclass(frozen=True, slots=True)
class PodRequests:
    """Total requests of the group's pods and the largest *pending* pod by CPU and by memory."""

    total: CpuMem = ZERO
    largest_pending_cpu: CpuMem = ZERO
    largest_pending_memory: CpuMem = ZERO


def escalator_pod_requests(pods: Iterable[Pod]) -> PodRequests:
    """Sum over every group pod, bound or not, on any node (tainted and cordoned ones included)."""
    total, big_cpu, big_mem = CpuMem(), CpuMem(), CpuMem()
    for pod in pods:
        request = escalator_pod_request(pod)
        total = total + request
        if pod.phase == "Pending":
            # Only a strictly larger pod replaces the current one: the first of equals wins.
            if request.cpu_m > big_cpu.cpu_m:
                big_cpu = request
            if request.mem_bytes > big_mem.mem_bytes:
                big_mem = request
    return PodRequests(total, big_cpu, big_mem)


@dataclass(frozen=True, slots=True)
class NodeCapacity:
    """Allocatable summed over untainted nodes, and the free room of the roomiest one per resource."""

    total: CpuMem = ZERO
    largest_available_cpu: CpuMem = ZERO
    largest_available_memory: CpuMem = ZERO


def _uses_room(pod: Pod) -> bool:
    # PodScheduled=True and phase Pending or Running. kubetide's Pod has no PodScheduled condition
    # of its own: a pod is scheduled exactly when it is bound to a node.
    return bool(pod.node_name) and pod.phase in ("Pending", "Running")


def escalator_node_capacity(
    untainted: Sequence[NodeView], pods_by_node: Mapping[str, Sequence[Pod]]
) -> NodeCapacity:
    """Capacity of the untainted nodes; free room counts only the group's pods on each node."""
    total, best_cpu, best_mem = CpuMem(), CpuMem(), CpuMem()
    for node in untainted:
        alloc = CpuMem(node.allocatable["cpu"], node.allocatable["memory"])
        total = total + alloc
        used = CpuMem()
        for pod in pods_by_node.get(node.name, ()):
            if _uses_room(pod):
                used = used + escalator_pod_request(pod)
        free = CpuMem(alloc.cpu_m - used.cpu_m, alloc.mem_bytes - used.mem_bytes)
        if free.cpu_m > best_cpu.cpu_m:
            best_cpu = free
        if free.mem_bytes > best_mem.mem_bytes:
            best_mem = free
    return NodeCapacity(total, best_cpu, best_mem)
