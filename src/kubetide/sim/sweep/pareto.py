"""The cost / harm trade-off: which runs no other run beats on both at once (the Pareto front), and
the ranking that peels fronts off one after another (non-dominated sorting).

Both objectives are minimized. A run dominates another when it is no worse on both and better on one;
equal runs do not dominate each other, so both sit on the front.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["pareto_front", "pareto_layers"]


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the non-dominated points, in increasing first objective. O(n log n)."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    front: list[int] = []
    best: tuple[float, float] | None = None  # the front point with the lowest second objective so far
    for i in order:
        x, y = points[i]
        # Sorted by (x, y): every earlier point has x' <= x; one dominates unless y is strictly lower,
        # or the point equals the best so far (equal points do not dominate each other).
        if best is None or y < best[1] or (x, y) == best:
            front.append(i)
            best = (x, y)
    return front


def pareto_layers(points: Sequence[tuple[float, float]]) -> list[int]:
    """Each point's front: 1 for the Pareto front, 2 for the front once the first is taken away, ..."""
    layer = [0] * len(points)
    remaining = list(range(len(points)))
    depth = 0
    while remaining:
        depth += 1
        front = [remaining[i] for i in pareto_front([points[j] for j in remaining])]
        for i in front:
            layer[i] = depth
        taken = set(front)
        remaining = [i for i in remaining if i not in taken]
    return layer
