"""How many registered nodes a node group may have right now without being "incorrect" (CA spec §2.3).

A scale-up in flight lowers the minimum (its nodes may not be there yet), long-unregistered instances
lower it too (they will never register), and scale-downs in flight raise the maximum (their nodes may
still be there). Health and upcoming-node counts are measured against this range.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AcceptableRange", "acceptable_range"]


@dataclass(frozen=True, slots=True)
class AcceptableRange:
    min_nodes: int
    max_nodes: int
    current_target: int


def acceptable_range(
    target: int, long_unregistered: int, scale_up_increase: int = 0, scale_down_requests: int = 0
) -> AcceptableRange:
    return AcceptableRange(
        min_nodes=target - long_unregistered - scale_up_increase,
        max_nodes=target + scale_down_requests,
        current_target=target,
    )
