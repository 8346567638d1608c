"""Executes a :class:`~kubetide.cluster.loop.scaledown_plan.ScaleDownPlan` (CA spec §7.8, §7.9) through
the cluster port and the cloud port.

Soft taints first (each a single-taint add or remove, so other controllers' taints survive). Then each
node to delete gets ``ToBeDeletedByClusterAutoscaler`` (and is cordoned with
``--cordon-node-before-terminating``), empty nodes first, then drained ones, each batch as upstream's
``taintNodesSync``: if the API refuses one node's taint, scheduling onto it was never stopped, so
draining it would be a guess; the taints this batch already wrote are removed again, the node gets a
``ScaleDownFailed`` event, nothing of the batch (nor the drained batch after an empty one) starts, and
the loop's scale-down result is ``Error`` (the failure time is set; an atomic group is never half
deleted). The drains and deletions themselves are :func:`continue_deletions`, the same code that
resumes them in later loops and after a restart.
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
    untaint,
)
from kubetide.cluster.loop.scaledown_plan import NodeToDelete, ScaleDownPlan
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason, ScaleDownResult
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT
from kubetide.model.api import ApiError, ClusterPort
from kubetide.model.node import NodeView
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
    for batch in ([i for i in plan.delete if i.empty], [i for i in plan.delete if not i.empty]):
        if not batch:
            continue
        tainted = _taint_batch(loop, batch, port, recorder, settings)
        if tainted is None:
            result.scale_down_result = str(ScaleDownResult.ERROR)
            break
        for item, node in zip(batch, tainted, strict=True):
            started.append(item)
            deletions.append(
                Deletion(node, loop.groups[item.group], loop.now, drain=not item.empty, atomic=item.atomic)
            )
            _announce(loop, item, recorder)
    if not started:
        if not result.scale_down_result:
            result.scale_down_result = str(ScaleDownResult.NO_NODE_DELETED)
        return []
    if not result.scale_down_result:
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


def _taint_batch(
    loop: LoopContext,
    batch: list[NodeToDelete],
    port: ClusterPort,
    recorder: Recorder,
    settings: DrainSettings,
) -> list[NodeView] | None:
    """``taintNodesSync``: each node of the batch tainted (and cordoned), as its view now is; None if
    one failed, after the ones tainted before it were cleaned (``CleanToBeDeleted``)."""
    tainted: list[NodeView] = []
    taint = to_be_deleted_taint(loop.now)
    for item in batch:
        name = item.node.name
        data: dict[str, object] = {"group": item.group, "node": name}
        ok = _mark(loop, recorder, name, data, port.add_node_taint, taint)
        # MarkToBeDeleted writes the taint and Spec.Unschedulable in one update: both or neither.
        if (
            ok
            and settings.cordon
            and not _mark(loop, recorder, name, data, port.set_node_unschedulable, True)
        ):
            untaint(loop, port, recorder, name, data, cordon=False)
            ok = False
        if not ok:
            for done in tainted:
                untaint(loop, port, recorder, done.name, {"node": done.name}, cordon=settings.cordon)
            return None
        kept = tuple(t for t in item.node.taints if t.key != taint.key)
        view = replace(item.node, taints=(*kept, taint))
        tainted.append(replace(view, unschedulable=True) if settings.cordon else view)
    return tainted


def _mark(
    loop: LoopContext,
    recorder: Recorder,
    name: str,
    data: dict[str, object],
    write: Callable[..., object],
    *args: object,
) -> bool:
    return recorder.api_call(
        loop,
        EventReason.SCALE_DOWN_FAILED,
        f"Node/{name}",
        "failed to mark the node as toBeDeleted/unschedulable",
        data,
        write,
        name,
        *args,
    )


def _announce(loop: LoopContext, item: NodeToDelete, recorder: Recorder) -> None:
    name = item.node.name
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
