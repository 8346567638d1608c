"""Whether the cluster, and each node group, is healthy enough to autoscale (CA spec §2.4).

An unhealthy cluster stops the whole loop (no scale-up, no scale-down), so only plainly Unready nodes
count: NotStarted, Deleted and unregistered ones do not. An unhealthy group is skipped for scale-up
("not ready for scale-up"): it is missing more nodes than the acceptable range explains. Both need the
count over an absolute allowance *and* over a percentage, so small clusters are not stopped by one
broken node.
"""

from __future__ import annotations

from kubetide.cluster.clusterstate.ranges import AcceptableRange
from kubetide.cluster.clusterstate.readiness import Readiness

__all__ = ["is_cluster_healthy", "is_node_group_healthy", "too_many_unready"]


def too_many_unready(
    unready: int, total: int, ok_total_unready_count: int, max_unready_percentage: float
) -> bool:
    return unready > ok_total_unready_count and unready > max_unready_percentage / 100 * total


def is_cluster_healthy(total: Readiness, ok_total_unready_count: int, max_unready_percentage: float) -> bool:
    return not too_many_unready(
        len(total.unready), len(total.registered), ok_total_unready_count, max_unready_percentage
    )


def is_node_group_healthy(
    acceptable: AcceptableRange | None,
    readiness: Readiness | None,
    ok_total_unready_count: int,
    max_unready_percentage: float,
) -> bool:
    if acceptable is None:
        return False
    if readiness is None:
        # No node registered yet: fine while nothing is wanted, or while everything is still coming.
        return acceptable.current_target == 0 or (acceptable.min_nodes == 0 and acceptable.current_target > 0)
    available = len(readiness.ready) + len(readiness.suspended)
    unjustified = max(0, acceptable.min_nodes - available)
    seen = available + len(readiness.unready) + len(readiness.not_started)
    return not too_many_unready(unjustified, seen, ok_total_unready_count, max_unready_percentage)
