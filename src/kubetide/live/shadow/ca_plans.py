"""A cluster autoscaler's loop plan as the shadow compares it: what kubetide would do (scale-ups,
node deletions, with their reasons in words) and why it keeps each node it would not remove.

Reads only the plan's values (:class:`~kubetide.cluster.loop.plan.LoopPlan`: the scale-up decision
with the expander's trace, the scale-down plan with the unneeded timers, the unremovable reasons and
the blocking pods); nothing is decided again.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubetide.cluster.loop.plan import LoopPlan
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.scaledown_plan import NodeToDelete, ScaleDownPlan
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
from kubetide.cluster.reasons import ScaleDownResult, UnremovableReason
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.live.shadow.compare import DELETE, SCALE_UP, Action, Kept, ShadowLoop, clock_text
from kubetide.model.node import NodeView

__all__ = ["being_deleted", "plan_result", "shadow_loop"]

_MOST_PODS_NAMED = 3


def being_deleted(node: NodeView) -> bool:
    return any(t.key == TO_BE_DELETED_TAINT for t in node.taints)


def shadow_loop(plan: LoopPlan, nodes: Iterable[NodeView], unneeded_time: float) -> ShadowLoop:
    """The plan of the loop at ``plan.now`` over ``nodes`` (the world's); ``unneeded_time`` is kubetide's
    ``--scale-down-unneeded-time`` (when its own timer would remove an unneeded node)."""
    now = plan.now
    intents: list[Action] = []
    up = plan.scale_up
    if up is not None and up.plan is not None:
        why = _scale_up_why(up)
        for info in up.plan.infos:
            intents.append(
                Action(
                    SCALE_UP, info.group, info.group, now, amount=info.delta, size=info.current_size, why=why
                )
            )
    down = plan.scale_down
    deleting = set()
    if down is not None and down.result is ScaleDownResult.NODE_DELETE_STARTED:
        for item in down.delete:
            deleting.add(item.node.name)
            intents.append(Action(DELETE, item.node.name, item.group, now, why=_deletion_why(item)))
    kept = {
        n.name: _kept(n.name, down, plan, unneeded_time)
        for n in nodes
        if n.name not in deleting and not being_deleted(n)
    }
    return ShadowLoop(now, tuple(intents), kept, idle=_idle(up, plan))


def _pods(names: list[str]) -> str:
    shown = ", ".join(names[:_MOST_PODS_NAMED])
    more = len(names) - _MOST_PODS_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _scale_up_why(decision: ScaleUpDecision) -> str:
    assert decision.plan is not None
    pods = [f"{p.namespace}/{p.name}" for p in (decision.plan.pods_triggered or decision.pods)]
    many = len(pods) != 1
    parts = [
        f"{len(pods)} pending pod{'s' if many else ''} ({_pods(pods)}) need{'' if many else 's'} a new node"
    ]
    steps = [
        f"{s.name} kept {', '.join(s.kept) or 'none'}" for s in decision.expander_trace if s.name != "random"
    ]
    if steps:
        parts.append("expander: " + "; ".join(steps))
    return "; ".join(parts)


def _deletion_why(item: NodeToDelete) -> str:
    state = "empty" if item.empty else f"{item.reason} (utilization {item.utilization})"
    why = f"{state}, unneeded since {clock_text(item.since)}"
    if item.moves:
        why += "; its pods would move: " + ", ".join(f"{pod} to {node}" for pod, node in item.moves)
    return why


def _kept(node: str, down: ScaleDownPlan | None, plan: LoopPlan, unneeded_time: float) -> Kept:
    if down is None:
        return Kept(f"its loop ended before scale-down ({plan.stopped or 'scale-down is disabled'})")
    if node in down.unneeded:
        since = down.unneeded[node]
        waited = max(0.0, plan.now - since)
        return Kept(
            f"unneeded since {clock_text(since)} ({waited:.0f}s), not yet for "
            f"--scale-down-unneeded-time ({unneeded_time:.0f}s)",
            until=since + unneeded_time,
        )
    if node in down.blocking:
        pod, rule = down.blocking[node]
        return Kept(f"pod {pod} cannot be moved ({rule})")
    reason = down.unremovable.get(node)
    if reason is not None:
        return Kept(_UNREMOVABLE.get(reason, f"it is unremovable ({reason})"))
    if node in down.not_candidates:
        return Kept(f"not a scale-down candidate: {down.not_candidates[node]}")
    return Kept("it is needed")


_UNREMOVABLE = {
    str(UnremovableReason.NO_PLACE_TO_MOVE_PODS): "a pod on it has no other place to go",
    str(UnremovableReason.NOT_UNDERUTILIZED): "it is not underutilized (--scale-down-utilization-threshold)",
    str(UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED): "its node group is at its minimum size",
    str(UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION): "scale-down is disabled on it by annotation",
    str(UnremovableReason.NOT_AUTOSCALED): "it belongs to no autoscaled node group",
    str(UnremovableReason.RECENTLY_UNREMOVABLE): "it was found unremovable recently",
    str(UnremovableReason.MINIMAL_RESOURCE_LIMIT_EXCEEDED): "removing it would go below a cluster minimum",
}


def _idle(decision: ScaleUpDecision | None, plan: LoopPlan) -> str:
    if decision is None:
        return f"its loop ended before scale-up ({plan.stopped or 'no scale-up step'})"
    if decision.plan is not None and decision.plan.infos:
        return ""
    said = f"no scale-up (its result: {decision.result or 'nothing to do'})"
    if decision.plan is not None and decision.plan.skipped:
        skipped = "; ".join(f"{g}: {', '.join(r)}" for g, r in sorted(decision.plan.skipped.items()))
        return f"{said}; groups skipped: {skipped}"
    return said


def plan_result(plan: LoopPlan) -> LoopResult:
    """A decided plan as a loop's result, for what reads results (``/debug/plan``, ``explain``): its
    decisions and reasons; no event, count or status, since nothing was carried out."""
    up, down = plan.scale_up, plan.scale_down
    result = LoopResult(plan=plan, scale_up=up, scale_up_result=up.result if up is not None else "")
    if down is not None:
        result.scale_down_result = str(down.result)
        result.unneeded = dict(down.unneeded)
        result.unremovable = dict(down.unremovable)
        result.blocking_pods = dict(down.blocking)
        result.not_candidates = dict(down.not_candidates)
    return result
