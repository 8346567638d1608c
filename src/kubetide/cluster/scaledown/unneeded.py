"""How long each node has been unneeded, and which unneeded nodes may be removed now (CA spec §7.6).

The unneeded set is replaced each loop by the nodes that passed simulation; a node keeps its original
``since`` while it stays in the set, so a node that flickers out restarts its timer (no surprise
deletions). :func:`removable_at` then applies, empty nodes first: the scale-down-disabled annotation,
the group, the unneeded / unready time (strictly longer than the threshold; with CA 1.31 even a zero one,
with ``--ca-compatibility-version=1.36`` a zero threshold is met at once), and the min size, counting
deletions in progress and the nodes accepted so far in this pass.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kubetide.cloud.instance import NodeGroupAutoscalingOptions
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.reasons import UnremovableReason
from kubetide.cluster.scaledown.eligibility import SCALE_DOWN_DISABLED_ANNOTATION
from kubetide.model.node import NodeView

__all__ = ["GroupSizes", "Removable", "UnneededNode", "removable_at", "update_unneeded"]


@dataclass(frozen=True, slots=True)
class UnneededNode:
    node: NodeView
    since: float
    empty: bool  # nothing to reschedule: it goes in the empty bucket
    risky: bool = False  # its pods would take more of a PDB than it has left: drained after the others


@dataclass(frozen=True, slots=True)
class GroupSizes:
    """Per group: target size, min size, deletions in progress."""

    target: int
    min_size: int
    deletions_in_progress: int = 0


@dataclass(frozen=True, slots=True)
class Removable:
    empty: tuple[str, ...]
    drain: tuple[str, ...]
    unremovable: dict[str, UnremovableReason]


def update_unneeded(
    previous: Mapping[str, UnneededNode],
    found: Iterable[tuple[NodeView, bool]],
    now: float,
    risky: Collection[str] = (),
) -> dict[str, UnneededNode]:
    """The new unneeded set: ``found`` is (node, empty) for each node that passed simulation, in
    simulation order; ``risky`` names those whose pods would take more of a PDB than it has left."""
    out = {}
    for node, empty in found:
        old = previous.get(node.name)
        name = node.name
        out[name] = UnneededNode(node, old.since if old is not None else now, empty, name in risky)
    return out


def removable_at(
    unneeded: Sequence[UnneededNode],
    now: float,
    group_of: Callable[[NodeView], str | None],
    group_options: Callable[[str], NodeGroupAutoscalingOptions],
    sizes: Mapping[str, GroupSizes],
    within_min_limits: Callable[[NodeView], UnremovableReason | None] = lambda node: None,
    *,
    zero_time_immediate: bool = False,
) -> Removable:
    """``RemovableAt``; ``within_min_limits`` answers None when removing the node (after the ones
    accepted before it) keeps every cluster resource at or above its ``--cores-total``/``--memory-total``
    (``--gpu-total``) minimum, else why not (MinimalResourceLimitExceeded, or UnexpectedError when the
    node's resources cannot be had), and must account for the nodes it already approved.
    ``zero_time_immediate``: CA 1.35+'s ``removalThreshold > 0 &&`` (``Compatibility.zero_removal_time_immediate``)."""
    left = {g: s.target for g, s in sizes.items()}
    unremovable: dict[str, UnremovableReason] = {}
    accepted: dict[bool, list[str]] = {True: [], False: []}
    # Empty nodes first: they are cheaper to remove, so the min size is spent on them first.
    for u in [u for u in unneeded if u.empty] + [u for u in unneeded if not u.empty]:
        reason = _reason(u, now, group_of, group_options, sizes, left, within_min_limits, zero_time_immediate)
        if reason is None:
            accepted[u.empty].append(u.node.name)
        else:
            unremovable[u.node.name] = reason
    return Removable(tuple(accepted[True]), tuple(accepted[False]), unremovable)


def _reason(
    u: UnneededNode,
    now: float,
    group_of: Callable[[NodeView], str | None],
    group_options: Callable[[str], NodeGroupAutoscalingOptions],
    sizes: Mapping[str, GroupSizes],
    left: dict[str, int],
    within_min_limits: Callable[[NodeView], UnremovableReason | None],
    zero_time_immediate: bool,
) -> UnremovableReason | None:
    node = u.node
    if node.annotations.get(SCALE_DOWN_DISABLED_ANNOTATION) == "true":
        return UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION
    group = group_of(node)
    if group is None:
        return UnremovableReason.NOT_AUTOSCALED
    opts = group_options(group)
    # nodes.go, unremovableReason: ``!since.Add(threshold).Before(now)``: the node must have been
    # unneeded strictly longer than the threshold. CA 1.31 has no "threshold > 0" exception (a node
    # first found unneeded is removable one loop later at the earliest); 1.35+ has one.
    ready = is_node_ready(node)
    threshold = opts.scale_down_unneeded_time if ready else opts.scale_down_unready_time
    if (threshold > 0 or not zero_time_immediate) and not u.since + threshold < now:
        return (
            UnremovableReason.NOT_UNNEEDED_LONG_ENOUGH if ready else UnremovableReason.NOT_UNREADY_LONG_ENOUGH
        )
    size = sizes.get(group)
    if size is None:  # verifyMinSize: the group's size could not be read
        return UnremovableReason.UNEXPECTED_ERROR
    if left[group] - size.deletions_in_progress <= size.min_size:
        return UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED
    limited = within_min_limits(node)
    if limited is not None:
        return limited
    left[group] -= 1
    return None
