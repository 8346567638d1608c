"""How many nodes a scale-up adds and a scale-down taints, given the cloud group's sizes (spec §5.1, §5.2).

Scale-up untaints the newest tainted nodes first (free, instant capacity) and asks the cloud only for
the rest, clamped to the cloud group's *max size* as upstream, and first to ``max_nodes``: the
untainted nodes plus the instances still on their way never pass it, as Escalator's documentation
promises ("hard limits ... Escalator will clamp") but its code does not do (it clamps to the cloud
group's maximum only, and untaints without a bound). Scale-down taints at most as many nodes as keep
``min_nodes`` untainted and the cloud group at or above its min size. The cloud sizes are the snapshot
read at the start of the run, as Escalator reads the ASG once per loop.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kubetide.escalator.reasons import Message
from kubetide.escalator.taints import untaint_newest
from kubetide.escalator.usage import EscalatorError
from kubetide.model.node import NodeView

__all__ = [
    "AsgSnapshot",
    "ScaleUpPlan",
    "escalator_max_nodes_headroom",
    "escalator_nodes_to_add",
    "escalator_scale_down_count",
    "escalator_scale_up_plan",
]


@dataclass(frozen=True, slots=True)
class AsgSnapshot:
    """The cloud group's sizes at the start of the run (AWS: DescribeAutoScalingGroups at Refresh)."""

    min_size: int
    max_size: int
    target_size: int


def escalator_nodes_to_add(nodes_to_add: int, target_size: int, max_size: int) -> int:
    """Upstream ``calculateNodesToAdd``: clamp so the target does not pass the cloud group's max."""
    if target_size + nodes_to_add > max_size:
        return max_size - target_size
    return nodes_to_add


def escalator_scale_down_count(requested: int, untainted: int, min_nodes: int, asg: AsgSnapshot) -> int:
    """How many nodes to taint (upstream ``scaleDownTaint``); EscalatorError below ``min_nodes``."""
    count = requested
    if untainted - count < min_nodes:
        count = untainted - min_nodes
        if count < 0:
            raise EscalatorError(Message.below_minimum(untainted, min_nodes))
    # Never taint the cloud group below its own min size (only when it is not already below it).
    if asg.target_size - count < asg.min_size and asg.target_size - asg.min_size >= 0:
        count = asg.target_size - asg.min_size
    return count


@dataclass(frozen=True, slots=True)
class ScaleUpPlan:
    """Upstream ``ScaleUp(n)`` decided: nodes to untaint, nodes to ask the cloud for, its return value."""

    untaint: tuple[str, ...] = ()
    add: int = 0  # cloud increase; also the scale lock's requested nodes
    error: str | None = None
    result: int = 0  # what ScaleUp returns: untainted + added, or 0 when the cloud step fails
    note: str | None = None  # the request was clamped to max_nodes (kubetide's; upstream has no clamp)


def escalator_max_nodes_headroom(max_nodes: int, untainted: int, registered: int, asg: AsgSnapshot) -> int:
    """How many more nodes may become untainted before the group reaches ``max_nodes``: the untainted
    nodes count, and so do the instances the cloud group is still bringing up (its target size above
    the registered nodes), since they join untainted. Never negative."""
    in_flight = max(asg.target_size - registered, 0)
    return max(max_nodes - untainted - in_flight, 0)


def escalator_scale_up_plan(
    n: int,
    tainted: Sequence[NodeView],
    asg: AsgSnapshot,
    max_nodes: int,
    unhealthy: Collection[str] = (),
    headroom: int | None = None,
) -> ScaleUpPlan:
    """Untaint up to ``n`` newest tainted nodes (skipping ``unhealthy``), then add the rest; ``n`` is
    first clamped to ``headroom`` (:func:`escalator_max_nodes_headroom`; None: no clamp)."""
    note = None
    if headroom is not None and n > headroom:
        note = Message.at_max_nodes(n, headroom, max_nodes)
        if headroom <= 0:
            return ScaleUpPlan((), 0, note, 0)
        n = headroom
    untaint = tuple(tainted[i].name for i in untaint_newest(tainted, n, unhealthy))
    remaining = n - len(untaint)
    if remaining <= 0:
        return ScaleUpPlan(untaint, 0, None, len(untaint), note)
    add = escalator_nodes_to_add(remaining, asg.target_size, asg.max_size)
    if add <= 0:
        # The untainted nodes stay untainted; ScaleUp reports 0 and the error (only logged).
        return ScaleUpPlan(untaint, 0, Message.refusing_scale_up(asg.target_size, max_nodes), 0, note)
    return ScaleUpPlan(untaint, add, None, len(untaint) + add, note)
