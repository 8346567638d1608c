"""Whether removing a node keeps the cluster at or above its ``--cores-total`` / ``--memory-total`` (and
GPU) minimums (CA 1.31's ``resource.LimitsFinder``, core/scaledown/resource/limits.go).

``LimitsLeft``: per resource with a minimum above 0, how much the cluster may lose,
``max(0, total - min)``. ``TryDecrementBy``: a node whose removal takes more of a resource than is
left (``delta > left``, for a ``delta`` above 0) is kept, and the amounts left are spent only by
the nodes accepted. A total that could not be computed (:data:`~kubetide.cluster.scaleup.limits.UNKNOWN`,
upstream's ``limitUnknown``) leaves an unknown amount, which any positive delta exceeds. GPUs are counted
by type (:func:`~kubetide.cluster.scaleup.limits.gpu_target`).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.cluster.scaleup.limits import UNKNOWN

__all__ = ["limits_left", "try_decrement"]


def limits_left(usage: Mapping[str, int], minimum: Mapping[str, int]) -> dict[str, int]:
    """``LimitsLeft``: how much of each resource with a minimum above 0 may go."""
    return {
        r: UNKNOWN if usage.get(r, 0) == UNKNOWN else max(0, usage.get(r, 0) - m)
        for r, m in minimum.items()
        if m > 0
    }


def try_decrement(left: dict[str, int], delta: Mapping[str, int]) -> bool:
    """``TryDecrementBy``: spend ``delta`` from ``left`` if no resource runs out (else change nothing)."""
    if any(v > 0 and r in left and (left[r] == UNKNOWN or v > left[r]) for r, v in delta.items()):
        return False
    for r, v in delta.items():
        if r in left:
            left[r] -= v
    return True
