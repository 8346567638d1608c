"""A loop's :class:`~kubetide.cluster.loop.plan.LoopPlan` as a JSON document, phase by phase with each
phase's reasons (live mode's ``/debug/plan``): what the plan decided, and beside it how the loop went
(its results, the actions that failed, the deletions it started and made: :func:`loop_document`).
Times are the loop's own (seconds; since the epoch in live mode). The same plan as a few lines of
text: :mod:`.plan_text`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubetide.cluster.loop.plan import (
    ClusterStateFindings,
    DrainRound,
    FailedInstanceRemovals,
    InstanceRemoval,
    LoopPlan,
    MinSizeRaises,
    Notices,
    PartialDeliveryRemovals,
    Phase,
    SizeFixes,
    TaintRemovals,
    UnregisteredRemovals,
)
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.scaledown_plan import NodeToDelete, ScaleDownPlan
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
from kubetide.cluster.loop.world import CAEvent
from kubetide.model.pod import Pod

__all__ = ["loop_document", "phase_document", "plan_document"]


def loop_document(result: LoopResult, at: float) -> dict[str, Any]:
    """One loop: its results, its plan (None for a loop that could not start) and what failed."""
    plan = result.plan
    return {
        "loopTime": at,
        "scaleUpResult": result.scale_up_result,
        "scaleDownResult": result.scale_down_result,
        "error": result.error,
        "plan": plan_document(plan) if plan is not None else None,
        "failures": [{"action": f.action, "target": f.target, "error": f.error} for f in result.failures],
        "deletionsStarted": list(result.deletions_started),
        "nodesDeleted": list(result.nodes_deleted),
    }


def plan_document(plan: LoopPlan) -> dict[str, Any]:
    return {"stopped": plan.stopped, "phases": [phase_document(p) for p in plan.phases]}


def phase_document(phase: Phase) -> dict[str, Any]:
    """``{"phase": NAME, ...}``: the phase's decision and its reasons."""
    name, fields = _DOCUMENTS[type(phase)](phase)
    return {"phase": name, **fields}


def _notices(p: Notices) -> tuple[str, dict[str, Any]]:
    return "notices", {"about": p.about, "events": _events(p.events)}


def _taint_removals(p: TaintRemovals) -> tuple[str, dict[str, Any]]:
    removals = [{"node": r.node, "taint": r.key} for r in p.removals]
    restored = {node: u.since for node, u in sorted(p.restored.items())}
    return "taintRemovals", {"about": p.about, "removals": removals, "unneededRestored": restored}


def _findings(p: ClusterStateFindings) -> tuple[str, dict[str, Any]]:
    return "clusterState", {
        "failedScaleUps": [{"group": g, "reason": code} for g, code in p.failed_scale_ups],
        "backoffs": p.backoffs,
        "reverts": [{"group": r.group, "delta": r.delta} for r in p.reverts],
        "events": _events(p.events),
    }


def _removals(removals: Iterable[InstanceRemoval]) -> list[dict[str, Any]]:
    return [{"group": r.group, "instances": list(r.instances), "force": r.force} for r in removals]


def _unregistered(p: UnregisteredRemovals) -> tuple[str, dict[str, Any]]:
    return "unregisteredRemovals", {"removals": _removals(p.removals), "kept": _events(p.kept)}


def _failed_instances(p: FailedInstanceRemovals) -> tuple[str, dict[str, Any]]:
    return "failedInstanceRemovals", {"removals": _removals(p.removals)}


def _partial_deliveries(p: PartialDeliveryRemovals) -> tuple[str, dict[str, Any]]:
    removals = [
        {"provisioningRequest": r.request, "group": r.group, "nodes": [n.name for n in r.nodes]}
        for r in p.removals
    ]
    return "partialDeliveryRemovals", {"removals": removals}


def _size_fixes(p: SizeFixes) -> tuple[str, dict[str, Any]]:
    return "sizeFixes", {"fixes": [{"group": f.group, "delta": f.delta} for f in p.fixes]}


def _drain_round(p: DrainRound) -> tuple[str, dict[str, Any]]:
    steps = [
        {
            "node": s.deletion.node.name,
            "group": s.deletion.group.id(),
            "drain": s.deletion.drain,
            "step": s.kind.value,
            "due": s.due,
            "message": s.message or None,
            "evict": [_pod(pod) for pod, _ in s.evict],
            "refused": [_pod(pod) for pod in s.refused],
        }
        for s in p.steps
    ]
    return "drainRound", {"started": p.started, "steps": steps}


def _scale_up(p: ScaleUpDecision) -> tuple[str, dict[str, Any]]:
    plan = p.plan
    return "scaleUp", {
        "result": p.result,
        "pods": [_pod(pod) for pod in p.pods],
        "skippedGroups": {g: list(r) for g, r in sorted(plan.skipped.items())} if plan is not None else {},
        "expander": [
            {"filter": s.name, "kept": list(s.kept), "ratings": dict(s.scores)} for s in p.expander_trace
        ],
        "chosen": [
            {"group": i.group, "from": i.current_size, "to": i.new_size, "max": i.max_size}
            for i in (plan.infos if plan is not None else ())
        ],
        "podsTriggered": [_pod(pod) for pod in plan.pods_triggered] if plan is not None else [],
        "error": plan.error if plan is not None else None,
        "disablesScaleDown": p.disables_scale_down,
    }


def _to_delete(item: NodeToDelete) -> dict[str, Any]:
    return {
        "node": item.node.name,
        "group": item.group,
        "empty": item.empty,
        "reason": item.reason,
        "unneededSince": item.since,
        "utilization": item.utilization,
        "podsToReschedule": list(item.pods_to_reschedule),
        "moves": dict(item.moves),
        "atomic": item.atomic,
    }


def _scale_down(p: ScaleDownPlan) -> tuple[str, dict[str, Any]]:
    return "scaleDown", {
        "result": str(p.result),
        "delete": [_to_delete(item) for item in p.delete],
        "softTaintsAdd": [node for node, _ in p.soft_taints_add],
        "softTaintsRemove": list(p.soft_taints_remove),
        "unneeded": dict(sorted(p.unneeded.items())),
        "noLongerUnneeded": list(p.no_longer_unneeded),
        "unremovable": dict(sorted(p.unremovable.items())),
        "blockingPods": {n: {"pod": pod, "reason": why} for n, (pod, why) in sorted(p.blocking.items())},
        "notCandidates": dict(sorted(p.not_candidates.items())),
    }


def _min_sizes(p: MinSizeRaises) -> tuple[str, dict[str, Any]]:
    raises = [
        {"group": r.group, "from": r.target, "to": r.target + r.delta, "max": r.max_size} for r in p.raises
    ]
    return "minSizeRaises", {"raises": raises}


def _events(events: Iterable[CAEvent]) -> list[dict[str, Any]]:
    return [{"type": e.type, "reason": e.reason, "object": e.object, "message": e.message} for e in events]


def _pod(pod: Pod) -> str:
    return f"{pod.namespace}/{pod.name}"


# One writer per phase type; a phase type added to plan.Phase without one fails the plan's tests.
_DOCUMENTS: Mapping[type, Callable[[Any], tuple[str, dict[str, Any]]]] = {
    Notices: _notices,
    TaintRemovals: _taint_removals,
    ClusterStateFindings: _findings,
    UnregisteredRemovals: _unregistered,
    FailedInstanceRemovals: _failed_instances,
    PartialDeliveryRemovals: _partial_deliveries,
    SizeFixes: _size_fixes,
    DrainRound: _drain_round,
    ScaleUpDecision: _scale_up,
    ScaleDownPlan: _scale_down,
    MinSizeRaises: _min_sizes,
}
