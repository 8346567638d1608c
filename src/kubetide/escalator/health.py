"""Unhealthy nodes and node-group health, Escalator's optional guard against broken launches (spec §6).

Only active when ``unhealthy_node_grace_period`` is set. A node is unhealthy when it is past the grace
period since creation and not Ready (cordoned nodes never are). Such nodes are tainted for removal
and never untainted. The group is unhealthy when too many of its newest nodes past the grace period
are unhealthy; then the run neither scales up nor down and only reaps unhealthy tainted nodes, so a
bad image or a broken AZ does not keep replacing nodes that never come up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kubetide.escalator.taints import created_at
from kubetide.model.node import NodeView

__all__ = [
    "escalator_count_unhealthy",
    "escalator_group_healthy",
    "escalator_most_recent_nodes",
    "escalator_node_unhealthy",
]


def escalator_node_unhealthy(node: NodeView, grace_s: float, now: float) -> bool:
    """Not cordoned, created at least ``grace_s`` ago, and not Ready (upstream ``IsNodeUnhealthy``)."""
    if node.unschedulable:
        return False
    return created_at(node) + grace_s <= now and not node.ready


def escalator_most_recent_nodes(nodes_newest_first: Sequence[NodeView], percent: int) -> list[NodeView]:
    """The first ``ceil(percent% of len)`` nodes: rounding up so one node at any percent is checked."""
    count = math.ceil(percent / 100 * len(nodes_newest_first))
    return list(nodes_newest_first[:count])


def escalator_count_unhealthy(nodes: Sequence[NodeView], grace_s: float, now: float) -> int:
    return sum(1 for n in nodes if escalator_node_unhealthy(n, grace_s, now))


def escalator_group_healthy(
    nodes: Sequence[NodeView],
    grace_s: float,
    newest_percent: int,
    max_unhealthy_percent: int,
    now: float,
) -> bool:
    """Upstream ``isNodegroupHealthy`` over all the group's nodes, cordoned ones included."""
    newest_first = sorted(nodes, key=lambda n: -created_at(n))
    # Strictly older than the grace period here, while a node is unhealthy from exactly the grace.
    old_enough = [n for n in newest_first if created_at(n) + grace_s < now]
    tested = escalator_most_recent_nodes(old_enough, newest_percent)
    if not tested:
        return True
    unhealthy = escalator_count_unhealthy(tested, grace_s, now)
    return (unhealthy * 100) // len(tested) <= max_unhealthy_percent
