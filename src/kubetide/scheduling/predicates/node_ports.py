"""NodePorts: a pod's host ports must not conflict (same port and protocol, and the same host IP or
either one the wildcard ``0.0.0.0``) with host ports of pods already bound to the node."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import HostPort, Pod
from kubetide.scheduling.reasons import FilterFailure, Reason
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["NodePorts", "ports_conflict"]


def ports_conflict(wanted: tuple[HostPort, ...], used: list[HostPort]) -> bool:
    return any(w.conflicts(u) for w in wanted for u in used)


def _used_ports(snap: ClusterSnapshot) -> dict[int, list[HostPort]]:
    used: dict[int, list[HostPort]] = {}
    for i, pod in snap.all_pods():
        if pod.host_ports:
            used.setdefault(i, []).extend(pod.host_ports)
    return used


class NodePorts:
    name = "NodePorts"

    def applies(self, pod: Pod, snap: ClusterSnapshot) -> bool:
        return bool(pod.host_ports)

    def mask(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], start: int = 0
    ) -> NDArray[np.bool_]:
        ok = np.ones(snap.num_slots - start, np.bool_)
        for i, ports in _used_ports(snap).items():
            if i >= start and ports_conflict(pod.host_ports, ports):
                ok[i - start] = False
        return ok

    def fits(self, pod: Pod, snap: ClusterSnapshot, slot: int, needs: list[tuple[int, int]]) -> bool:
        used = [port for other in snap.pods_on(slot) for port in other.host_ports]
        return not ports_conflict(pod.host_ports, used)

    def failures(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], nodes: NDArray[np.intp]
    ) -> list[FilterFailure | None]:
        used = _used_ports(snap)
        fail = FilterFailure(self.name, (Reason.HOST_PORTS.value,))
        return [fail if ports_conflict(pod.host_ports, used.get(int(i), [])) else None for i in nodes]
