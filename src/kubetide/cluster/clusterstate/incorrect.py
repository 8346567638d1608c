"""Node groups whose registered node count does not match their target, and since when (CA spec §2.8).

A group that stays incorrect for longer than the provision time while it has fewer nodes than it
should gets its target lowered (``fixNodeGroupSize``): the cloud will not deliver the missing ones. The
first-observed time is kept only while both sizes stay the same, so a group still making progress is
never "fixed".
"""

from __future__ import annotations

from dataclasses import dataclass

from kubetide.cluster.clusterstate.ranges import AcceptableRange
from kubetide.cluster.clusterstate.readiness import Readiness

__all__ = ["IncorrectSize", "incorrect_size", "size_fix_delta"]


@dataclass(frozen=True, slots=True)
class IncorrectSize:
    current_size: int
    expected_size: int
    first_observed: float


def incorrect_size(
    previous: IncorrectSize | None, readiness: Readiness, acceptable: AcceptableRange, now: float
) -> IncorrectSize | None:
    registered = len(readiness.registered)
    target = acceptable.current_target
    unregistered = len(readiness.unregistered) + len(readiness.long_unregistered)
    if not (registered > target or registered < target - unregistered):
        return None
    if previous is not None and previous.current_size == registered and previous.expected_size == target:
        return previous
    return IncorrectSize(registered, target, now)


def size_fix_delta(incorrect: IncorrectSize, now: float, max_node_provision_time: float) -> int | None:
    """The negative ``DecreaseTargetSize`` delta ``fixNodeGroupSize`` applies, or None (it never raises)."""
    if incorrect.first_observed + max_node_provision_time < now and (
        incorrect.current_size < incorrect.expected_size
    ):
        return incorrect.current_size - incorrect.expected_size
    return None
