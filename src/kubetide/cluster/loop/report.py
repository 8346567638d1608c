"""What a loop reports besides its events: the numbers behind CA's Prometheus metrics
(:class:`~kubetide.cluster.loop.result.LoopMetrics`) and the scale-down candidates per group that the
status ConfigMap counts. Computed from the loop's state, so live mode only exports them."""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.loop.outcome import LoopOutcome
from kubetide.cluster.loop.result import LoopMetrics
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.scaledown.unneeded import UnneededNode

__all__ = ["candidates_by_group", "loop_metrics"]


def loop_metrics(
    view: LoopView, done: LoopOutcome, registry: ClusterStateRegistry, unneeded: int, unschedulable: int
) -> LoopMetrics:
    """``done``: everything the loop did (and the deletions between loops since the last one)."""
    r = registry.total_readiness
    return LoopMetrics(
        unschedulable_pods=unschedulable,
        unneeded_nodes=unneeded,
        # CA's nodes_count{state} labels.
        nodes_by_state={
            "ready": len(r.ready),
            "unready": len(r.unready),
            "notStarted": len(r.not_started),
            "longUnregistered": len(r.long_unregistered),
            "unregistered": len(r.unregistered),
        },
        node_groups=len(view.groups),
        scaled_up_nodes=done.stats.nodes_added,
        scaled_down_nodes=dict(done.scaled_down),
        failed_scale_ups=dict(done.failed_scale_ups),
        evicted_pods=dict(done.evictions),
        cluster_safe_to_autoscale=registry.is_cluster_healthy(),
        api_errors=done.api_errors,
        kept_foreign_instances=_count_by_group(registry, view.now),
    )


def _count_by_group(registry: ClusterStateRegistry, now: float) -> dict[str, int]:
    out: dict[str, int] = {}
    for u in registry.kept_foreign(now):
        out[u.group] = out.get(u.group, 0) + 1
    return out


def candidates_by_group(view: LoopView, unneeded: Mapping[str, UnneededNode]) -> dict[str, list[str]]:
    """Scale-down candidates per group, for the status (upstream: the unneeded nodes)."""
    out: dict[str, list[str]] = {}
    for name in unneeded:
        gid = view.group_of.get(name)
        if gid is not None:
            out.setdefault(gid, []).append(name)
    return out
