"""How N new nodes are split across similar node groups (``BalanceScaleUpBetweenGroups``, CA spec §6.6).

Groups at max are ignored and N is capped at the free capacity; then one node at a time goes to the
smallest group, round robin among groups of equal size, so zones stay balanced. Groups that get no new
node are left out of the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

__all__ = ["GroupSize", "ScaleUpInfo", "balance_scale_up"]


@dataclass(frozen=True, slots=True)
class GroupSize:
    id: str
    min_size: int
    max_size: int
    size: int


@dataclass(frozen=True, slots=True)
class ScaleUpInfo:
    """One group's part of a scale-up: ``IncreaseSize(new_size - current_size)``."""

    group: str
    current_size: int
    new_size: int
    max_size: int

    @property
    def delta(self) -> int:
        return self.new_size - self.current_size

    def __str__(self) -> str:
        # Go's %v of the struct, as in the TriggeredScaleUp event: {ng2 1->2 (max: 10)}
        return f"{{{self.group} {self.current_size}->{self.new_size} (max: {self.max_size})}}"


def balance_scale_up(groups: Sequence[GroupSize], new_nodes: int) -> list[ScaleUpInfo]:
    # Groups at (or, after a manual resize, above) max take no part.
    infos = [ScaleUpInfo(g.id, g.size, g.size, g.max_size) for g in groups if g.size < g.max_size]
    new_nodes = min(new_nodes, sum(i.max_size - i.current_size for i in infos))
    if new_nodes <= 0:
        return []
    # Upstream's sort is not stable; a stable one makes ties deterministic (first listed first).
    infos.sort(key=lambda i: i.current_size)
    start = current = 0
    while new_nodes > 0:
        if infos[current].new_size < infos[current].max_size:
            infos[current] = replace(infos[current], new_size=infos[current].new_size + 1)
            new_nodes -= 1
        else:
            # A full group leaves the round by swapping it to the front; every group between start and
            # current has the same size, so the order by size still holds.
            infos[start], infos[current] = infos[current], infos[start]
            start += 1
        if current < len(infos) - 1 and infos[current].new_size > infos[current + 1].new_size:
            current += 1
        else:
            current = start
    return [i for i in infos if i.new_size != i.current_size]
