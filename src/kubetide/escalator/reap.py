"""Which tainted nodes to delete now: Escalator's reaper (spec §5.4).

A tainted node is deleted once it has been tainted longer than ``soft_delete_grace_period`` and is
empty of the group's pods, or unconditionally once past ``hard_delete_grace_period`` (there is no
eviction and no PDB: the hard period kills what still runs). Emptiness only sees the group's own
pods, so pods of other groups on the node are invisible. Force-tainted nodes go as soon as they are
empty, with no grace period and no ``no-delete`` check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubetide.escalator.config import NodeGroupOptions
from kubetide.escalator.health import escalator_node_unhealthy
from kubetide.escalator.membership import is_daemonset_pod
from kubetide.escalator.taints import NO_DELETE_ANNOTATION, taint_time
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["escalator_force_reap", "escalator_node_empty", "escalator_reap"]


def escalator_node_empty(node_name: str, pods_by_node: Mapping[str, Sequence[Pod]]) -> bool:
    """No non-DaemonSet group pod on the node; a node missing from the map is *not* empty."""
    if node_name not in pods_by_node:
        return False
    return all(is_daemonset_pod(p) for p in pods_by_node[node_name])


def escalator_reap(
    tainted: Sequence[NodeView],
    pods_by_node: Mapping[str, Sequence[Pod]],
    group: NodeGroupOptions,
    now: float,
    *,
    healthy_allowed: bool = True,
) -> list[NodeView]:
    """Upstream ``TryRemoveTaintedNodes``: the tainted nodes due for deletion, in input order."""
    due: list[NodeView] = []
    soft, hard = group.soft_delete_grace_s, group.hard_delete_grace_s
    for node in tainted:
        # While the group is unhealthy only unhealthy nodes are reaped, to get it healthy again.
        if (
            group.health_check_enabled
            and not healthy_allowed
            and not escalator_node_unhealthy(node, group.unhealthy_node_grace_s, now)
        ):
            continue
        if node.annotations.get(NO_DELETE_ANNOTATION, ""):
            continue
        tainted_at = taint_time(node)
        if tainted_at is None:
            continue  # no parsable taint time (always the case in dry mode): never reaped
        age = now - tainted_at
        if age > soft and (escalator_node_empty(node.name, pods_by_node) or age > hard):
            due.append(node)
    return due


def escalator_force_reap(
    force_tainted: Sequence[NodeView], pods_by_node: Mapping[str, Sequence[Pod]]
) -> list[NodeView]:
    """Upstream ``TryRemoveForceTaintedNodes``: every empty force-tainted node."""
    return [n for n in force_tainted if escalator_node_empty(n.name, pods_by_node)]
