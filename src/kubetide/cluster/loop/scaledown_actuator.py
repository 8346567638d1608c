"""Executes a :class:`~kubetide.cluster.loop.scaledown_plan.ScaleDownPlan` (CA spec §7.8, §7.9) through
the cluster port.

Soft taints first (each a single-taint add or remove, so other controllers' taints survive). Then each
node to delete gets ``ToBeDeletedByClusterAutoscaler`` (and is cordoned with
``--cordon-node-before-terminating``), empty nodes first, then drained ones, each batch as upstream's
``taintNodesSync``: if the API refuses one node's taint, scheduling onto it was never stopped, so
draining it would be a guess; the taints this batch already wrote are removed again, the node gets a
``ScaleDownFailed`` event, nothing of the batch (nor the drained batch after an empty one) starts, and
the loop's scale-down result is ``Error`` (the failure time is set; an atomic group is never half
deleted). The deletions started (``LoopOutcome.started``) then take their first drain step, decided on
the tainted nodes (:mod:`kubetide.cluster.loop.deletions`), as those resumed in later loops and after
a restart.
"""

from __future__ import annotations

from collections.abc import Callable

from kubetide.cluster.loop.deletions import tainted_view, to_be_deleted_taint
from kubetide.cluster.loop.drain_actuator import untaint
from kubetide.cluster.loop.execution import Execution
from kubetide.cluster.loop.scaledown_plan import NodeToDelete, ScaleDownPlan
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason, ScaleDownResult
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT
from kubetide.model.api import ApiError
from kubetide.model.node import NodeView

__all__ = ["execute_scale_down"]


def _soft_taints(run: Execution, plan: ScaleDownPlan) -> None:
    # Soft taints are a hint to the scheduler; a failed write is counted and retried next loop
    # (the plan recomputes them from the nodes), with no event: upstream only logs these.
    for node, taint in plan.soft_taints_add:
        try:
            run.port.add_node_taint(node, taint)
        except ApiError as exc:
            run.outcome.api_errors += 1
            run.outcome.fail("add_node_taint", f"Node/{node}", exc)
    for node in plan.soft_taints_remove:
        try:
            run.port.remove_node_taint(node, DELETION_CANDIDATE_TAINT)
        except ApiError as exc:
            run.outcome.api_errors += 1
            run.outcome.fail("remove_node_taint", f"Node/{node}", exc)


def execute_scale_down(run: Execution, plan: ScaleDownPlan) -> None:
    """Run the plan: the deletions started (tainted) go to ``run.outcome.started``, in the plan's order;
    a refused taint sets ``run.outcome.taint_failed``."""
    _soft_taints(run, plan)
    if plan.result is not ScaleDownResult.NODE_DELETE_STARTED:
        return
    indexed = list(enumerate(plan.delete))
    started = 0
    for batch in ([x for x in indexed if x[1].empty], [x for x in indexed if not x[1].empty]):
        if not batch:
            continue
        tainted = _taint_batch(run, [item for _, item in batch])
        if tainted is None:
            run.outcome.taint_failed = True
            break
        for (index, item), node in zip(batch, tainted, strict=True):
            started += 1
            run.outcome.started.append((node, index))
            _announce(run, item)
    if started:
        run.outcome.stats.scale_downs += 1


def _taint_batch(run: Execution, batch: list[NodeToDelete]) -> list[NodeView] | None:
    """``taintNodesSync``: each node of the batch tainted (and cordoned), as its view now is; None if
    one failed, after the ones tainted before it were cleaned (``CleanToBeDeleted``)."""
    tainted: list[NodeView] = []
    taint = to_be_deleted_taint(run.now)
    cordon = run.settings.cordon
    for item in batch:
        name = item.node.name
        data: dict[str, object] = {"group": item.group, "node": name}
        ok = _mark(run, name, data, run.port.add_node_taint, taint)
        # MarkToBeDeleted writes the taint and Spec.Unschedulable in one update: both or neither.
        if ok and cordon and not _mark(run, name, data, run.port.set_node_unschedulable, True):
            untaint(run, name, data, cordon=False)
            ok = False
        if not ok:
            for done in tainted:
                untaint(run, done.name, {"node": done.name})
            return None
        tainted.append(tainted_view(item.node, run.now, cordon))
    return tainted


def _mark(
    run: Execution, name: str, data: dict[str, object], write: Callable[..., object], *args: object
) -> bool:
    return run.api_call(
        EventReason.SCALE_DOWN_FAILED,
        f"Node/{name}",
        "failed to mark the node as toBeDeleted/unschedulable",
        data,
        write,
        name,
        *args,
    )


def _announce(run: Execution, item: NodeToDelete) -> None:
    name = item.node.name
    data = {"group": item.group, "node": name}
    run.emit(
        CAEvent(
            "Normal",
            str(EventReason.SCALE_DOWN),
            f"Node/{name}",
            "marked the node as toBeDeleted/unschedulable",
            data,
        )
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
    run.emit(CAEvent("Normal", reason, f"Node/{name}", msg, data))
