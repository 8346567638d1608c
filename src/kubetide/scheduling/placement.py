"""Spreading identical pods over nodes whose per-node capacity is known, without a loop per pod.

Two orders are used by the simulations: *first fit* (fill nodes in slot order; the estimator, as the
spec of Cluster Autoscaler's binpacking describes it) and *round robin from a cursor* (Cluster
Autoscaler's ``FitsAnyNodeMatching`` starts each search at the node after its last success, so
successive pods land on successive nodes; the removal simulation). Both give exactly what placing the
pods one at a time in that order gives, because identical pods that do not constrain each other fit a
node until its capacity is used up and never afterwards.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["first_fit_fill", "round_robin_fill"]

IntArray = NDArray[np.int64]


def first_fit_fill(cap: IntArray, pods: int) -> IntArray:
    """Pods per node when ``pods`` identical pods go, one by one, to the first node with room."""
    before = np.cumsum(cap) - cap
    result: IntArray = np.clip(pods - before, 0, cap)
    return result


def round_robin_fill(cap: IntArray, cursor: int, pods: int) -> tuple[IntArray, int] | None:
    """Pods per node when each pod goes to the first node with room at or after the cursor (wrapping),
    and the cursor then moves past that node. None when the nodes cannot take all ``pods``.

    Returns the counts and the new cursor. The pods go in passes: pass ``j`` gives one pod to every node
    with more than ``j`` free places, in cursor order; so with ``t`` full passes and ``r`` pods left
    over, a node gets ``min(cap, t)`` plus one if it is among the first ``r`` with ``cap > t``.
    """
    n = len(cap)
    if pods == 0:
        return np.zeros(n, np.int64), cursor
    if int(cap.sum()) < pods:
        return None
    order = np.concatenate((np.arange(cursor, n), np.arange(cursor)))
    c = cap[order]
    lo, hi = 0, int(c.max())  # largest t with sum(min(c, t)) <= pods
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if int(np.minimum(c, mid).sum()) <= pods:
            lo = mid
        else:
            hi = mid - 1
    t = lo
    counts = np.minimum(c, t)
    left = pods - int(counts.sum())
    if left:
        extra = np.flatnonzero(c > t)[:left]
        counts[extra] += 1
        last = int(extra[-1])
    else:
        last = int(np.flatnonzero(c >= t)[-1])
    out = np.zeros(n, np.int64)
    out[order] = counts
    return out, (int(order[last]) + 1) % n
