"""Executes a :class:`~kubetide.cluster.loop.scaledown_plan.ScaleDownPlan` (CA spec §7.8, §7.9) through
the cluster port and the cloud port.

Soft taints first (each a single-taint add or remove, so other controllers' taints survive). Then each
node to delete gets ``ToBeDeletedByClusterAutoscaler`` (empty nodes first, then drained ones), and
only a node whose taint was written is drained and deleted: if the API refused the taint, scheduling
onto the node was never stopped, so draining it would be a guess; it gets a ``ScaleDownFailed`` event
and stays a candidate. The drains and deletions themselves are :func:`continue_deletions`, the same
code that resumes them in later loops and after a restart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kubetide.cluster.loop.context import LoopContext, Recorder
from kubetide.cluster.loop.deletions import (
    Deletion,
    DrainSettings,
    DrainState,
    continue_deletions,
    to_be_deleted_taint,
)
from kubetide.cluster.loop.scaledown_plan import NodeToDelete, ScaleDownPlan
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason, ScaleDownResult
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT
from kubetide.model.api import ApiError, ClusterPort
from kubetide.scheduling.drainability import DrainContext

__all__ = ["execute_scale_down"]


def _soft_taints(loop: LoopContext, plan: ScaleDownPlan, port: ClusterPort) -> None:
    # Soft taints are a hint to the scheduler; a failed write is counted and retried next loop
    # (the plan recomputes them from the nodes), with no event: upstream only logs these.
    for node, taint in plan.soft_taints_add:
        try:
            port.add_node_taint(node, taint)
        except ApiError:
            loop.api_errors += 1
    for node in plan.soft_taints_remove:
        try:
            port.remove_node_taint(node, DELETION_CANDIDATE_TAINT)
        except ApiError:
            loop.api_errors += 1


def execute_scale_down(
    loop: LoopContext,
    plan: ScaleDownPlan,
    port: ClusterPort,
    recorder: Recorder,
    drain_ctx: DrainContext,
    *,
    settings: DrainSettings,
    drains: dict[str, DrainState],
    register_scale_down: Callable[[str, str], None],
) -> list[NodeToDelete]:
    """Run the plan; returns the nodes whose deletion started (tainted), in order."""
    result = loop.result
    result.unneeded = dict(plan.unneeded)
    result.unremovable.update(plan.unremovable)
    result.blocking_pods.update(plan.blocking)
    _soft_taints(loop, plan, port)
    if plan.result is not ScaleDownResult.NODE_DELETE_STARTED:
        result.scale_down_result = str(plan.result)
        return []
    started: list[NodeToDelete] = []
    deletions: list[Deletion] = []
    for item in plan.delete:
        if not _taint(loop, item, port, recorder):
            continue
        started.append(item)
        name = item.node.name
        taint = to_be_deleted_taint(loop.now)
        kept = tuple(t for t in item.node.taints if t.key != taint.key)
        deletions.append(
            Deletion(replace(item.node, taints=(*kept, taint)), loop.groups[item.group], loop.now)
        )
        data = {"group": item.group, "node": name}
        recorder.emit(
            loop,
            CAEvent(
                "Normal",
                str(EventReason.SCALE_DOWN),
                f"Node/{name}",
                "marked the node as toBeDeleted/unschedulable",
                data,
            ),
        )
        if item.empty:
            msg = f'Scale-down: removing empty node "{name}"'
            reason = str(EventReason.SCALE_DOWN_EMPTY)
        else:
            msg = (
                f"Scale-down: removing node {name}, utilization: {item.utilization}, "
                f"pods to reschedule: {','.join(item.pods_to_reschedule)}"
            )
            reason = str(EventReason.SCALE_DOWN)
        recorder.emit(loop, CAEvent("Normal", reason, f"Node/{name}", msg, data))
    if not started:
        result.scale_down_result = str(ScaleDownResult.NO_NODE_DELETED)
        return []
    result.scale_down_result = str(ScaleDownResult.NODE_DELETE_STARTED)
    result.stats.scale_downs += 1
    continue_deletions(
        loop,
        deletions,
        loop.pods_by_node,
        port,
        recorder,
        drain_ctx,
        settings=settings,
        drains=drains,
        is_deleting_in_cloud=lambda n: False,
        register_scale_down=register_scale_down,
    )
    return started


def _taint(loop: LoopContext, item: NodeToDelete, port: ClusterPort, recorder: Recorder) -> bool:
    name = item.node.name
    return recorder.api_call(
        loop,
        EventReason.SCALE_DOWN_FAILED,
        f"Node/{name}",
        "failed to mark the node as toBeDeleted/unschedulable",
        {"group": item.group, "node": name},
        port.add_node_taint,
        name,
        to_be_deleted_taint(loop.now),
    )
