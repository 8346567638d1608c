"""NodeResourcesFit: the pod's effective request must fit in allocatable minus what bound pods request,
for every resource it asks for (cpu, memory, ephemeral-storage, extended resources), and the node must
have room for one more pod. A resource the pod does not request is never checked, so a pod without
requests fits an overcommitted node as long as the pod count allows, as upstream."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubetide.scheduling.reasons import FilterFailure, Reason, insufficient
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["NodeResourcesFit", "pods_that_fit", "room_for_one"]

_BASE_ORDER = (CPU, MEMORY, EPHEMERAL_STORAGE)


def pods_that_fit(snap: ClusterSnapshot, vec: NDArray[np.int64], start: int = 0) -> NDArray[np.int64]:
    """How many more pods requesting ``vec`` each node (from slot ``start`` on) can take, resources
    only (>= 0)."""
    cols = np.flatnonzero(vec)  # the pods column is always set
    free = snap.allocatable[start:, cols] - snap.requested[start:, cols]
    counts: NDArray[np.int64] = np.maximum((free // vec[cols]).min(axis=1), 0)
    return counts


def room_for_one(alloc: list[int], used: list[int], needs: list[tuple[int, int]]) -> bool:
    """:func:`pods_that_fit` > 0 for one node, from its allocatable and requested rows as integers and
    the request as (column, amount) pairs (``PodFacts.needs``): numpy's per-call cost would be ten
    times this arithmetic where one node is asked about."""
    return all(alloc[c] - used[c] >= v for c, v in needs)


class NodeResourcesFit:
    name = "NodeResourcesFit"

    def applies(self, pod: Pod, snap: ClusterSnapshot) -> bool:
        return True

    def mask(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], start: int = 0
    ) -> NDArray[np.bool_]:
        cols = np.flatnonzero(vec)
        free = snap.allocatable[start:, cols] - snap.requested[start:, cols]
        result: NDArray[np.bool_] = np.all(free >= vec[cols], axis=1)
        return result

    def fits(self, pod: Pod, snap: ClusterSnapshot, slot: int, needs: list[tuple[int, int]]) -> bool:
        return room_for_one(snap.allocatable[slot].tolist(), snap.requested[slot].tolist(), needs)

    def failures(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], nodes: NDArray[np.intp]
    ) -> list[FilterFailure | None]:
        free = snap.allocatable[nodes] - snap.requested[nodes]
        # Upstream order: pod count, cpu, memory, ephemeral-storage, then extended resources.
        names = [n for n in _BASE_ORDER] + sorted(r for r in snap.resources[4:])
        cols = [snap.column(n) for n in names]
        pods_col = snap.column("pods")
        out: list[FilterFailure | None] = []
        for row in range(len(nodes)):
            reasons = []
            if free[row, pods_col] < 1:
                reasons.append(Reason.TOO_MANY_PODS.value)
            for name, col in zip(names, cols, strict=True):
                if vec[col] > 0 and vec[col] > free[row, col]:
                    reasons.append(insufficient(name))
            out.append(FilterFailure(self.name, tuple(reasons)) if reasons else None)
        return out
