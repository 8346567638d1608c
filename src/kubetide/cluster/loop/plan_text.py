"""A loop's :class:`~kubetide.cluster.loop.plan.LoopPlan` as a compact text block: live mode logs one
per loop at ``-v=4`` (and one per deletions pass between loops that did something). The first line
is the loop's results; then one line per phase of the plan, with its reasons. A list names at most
:data:`LISTED` items and counts the rest, so a loop over a large cluster stays a few lines (the JSON
document, :mod:`.plan_document`, lists everything).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubetide.cluster.loop.plan import (
    ClusterStateFindings,
    DrainRound,
    FailedInstanceRemovals,
    InstanceRemoval,
    MinSizeRaises,
    Notices,
    PartialDeliveryRemovals,
    SizeFixes,
    TaintRemovals,
    UnregisteredRemovals,
)
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.scaledown_plan import NodeToDelete, ScaleDownPlan
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision

__all__ = ["LISTED", "render_plan"]

LISTED = 10  # items of one list the text block names; the rest are counted


def render_plan(result: LoopResult, clock: Callable[[float], str], *, between_loops: bool = False) -> str:
    """A few lines per loop: the results, then one line per phase of the plan; ``clock`` writes a time.
    ``between_loops``: a deletions pass (its drain round alone)."""
    head = f"loop: scale-up {result.scale_up_result or '-'}, scale-down {result.scale_down_result or '-'}"
    if between_loops:
        head = "deletions between loops"
    plan = result.plan
    if plan is not None and plan.stopped:
        head += f" (ended early: {plan.stopped})"
    lines = [head]
    if result.error:
        lines.append(f"  error: {result.error}")
    for phase in plan.phases if plan is not None else ():
        line = _LINES[type(phase)](phase, clock)
        if line:
            lines.append(f"  {line}")
    for f in result.failures:
        lines.append(f"  failed: {f.action} {f.target}: {f.error}")
    return "\n".join(lines)


def _listed(items: Iterable[str]) -> str:
    shown = list(items)
    if len(shown) <= LISTED:
        return ", ".join(shown)
    return f"{', '.join(shown[:LISTED])} and {len(shown) - LISTED} more"


def _notices_line(p: Notices, _: Callable[[float], str]) -> str:
    return f"{p.about}: {_listed(f'{e.reason} {e.object}' for e in p.events)}"


def _taint_removals_line(p: TaintRemovals, _: Callable[[float], str]) -> str:
    line = (
        f"{p.about}: remove {_listed(f'{r.key} from {r.node}' for r in p.removals)}"
        if p.removals
        else p.about
    )
    if p.restored:
        line += f"; unneeded timers restored: {_listed(sorted(p.restored))}"
    return line


def _findings_line(p: ClusterStateFindings, _: Callable[[float], str]) -> str:
    parts = [f"scale-up of {g} failed ({code})" for g, code in p.failed_scale_ups]
    parts += [f"revert the timed-out scale-up of {r.group} ({r.delta:+d})" for r in p.reverts]
    if p.backoffs:
        parts.append(f"{p.backoffs} group(s) backed off")
    return f"cluster state: {_listed(parts)}" if parts else ""


def _removals_text(removals: Iterable[InstanceRemoval]) -> str:
    return _listed(f"{r.group}: {', '.join(r.instances)}" for r in removals)


def _unregistered_line(p: UnregisteredRemovals, _: Callable[[float], str]) -> str:
    line = f"remove unregistered instances: {_removals_text(p.removals)}" if p.removals else ""
    if p.kept:
        line += ("; " if line else "") + f"unregistered instances kept: {len(p.kept)}"
    return line


def _failed_instances_line(p: FailedInstanceRemovals, _: Callable[[float], str]) -> str:
    return f"remove instances that failed to start: {_removals_text(p.removals)}"


def _partial_deliveries_line(p: PartialDeliveryRemovals, _: Callable[[float], str]) -> str:
    nodes = (f"{r.group}/{n.name} ({r.request})" for r in p.removals for n in r.nodes)
    return f"remove the empty nodes of partly provisioned atomic requests: {_listed(nodes)}"


def _size_fixes_line(p: SizeFixes, _: Callable[[float], str]) -> str:
    return f"fix sizes: {_listed(f'{f.group} {f.delta:+d}' for f in p.fixes)}"


def _drain_line(p: DrainRound, clock: Callable[[float], str]) -> str:
    def step(s: Any) -> str:
        text = f"{s.deletion.node.name} {s.kind.value}"
        if s.evict:
            text += f" ({len(s.evict)} pod{'s' if len(s.evict) != 1 else ''})"
        if s.due is not None:
            text += f" (next at {clock(s.due)})"
        return text

    which = "deletions started" if p.started else "deletions in progress"
    return f"{which}: {_listed(step(s) for s in p.steps)}"


def _scale_up_line(p: ScaleUpDecision, _: Callable[[float], str]) -> str:
    plan = p.plan
    if not p.pods:
        return ""  # the loop's first line says the result
    line = f"scale-up for {len(p.pods)} pod{'s' if len(p.pods) != 1 else ''}: {p.result}"
    if plan is None:
        return line
    if plan.skipped:
        skipped = (f"{g} ({', '.join(r)})" for g, r in sorted(plan.skipped.items()))
        line += f"; skipped {_listed(skipped)}"
    for step in p.expander_trace:
        line += f"; expander {step.name} kept {_listed(step.kept) or 'none'}"
    if plan.infos:
        line += f"; chosen {_listed(f'{i.group} {i.current_size}->{i.new_size}' for i in plan.infos)}"
    if plan.error:
        line += f"; error: {plan.error}"
    return line


def _scale_down_line(p: ScaleDownPlan, clock: Callable[[float], str]) -> str:
    parts = [f"scale-down: {p.result}"]
    if p.delete:
        parts.append(f"delete {_listed(_deleted(d) for d in p.delete)}")
    if p.unneeded:
        parts.append(f"unneeded {_listed(f'{n} since {clock(t)}' for n, t in sorted(p.unneeded.items()))}")
    if p.unremovable:
        parts.append(f"unremovable {_listed(f'{n}: {r}' for n, r in sorted(p.unremovable.items()))}")
    if p.soft_taints_add or p.soft_taints_remove:
        parts.append(f"soft taints +{len(p.soft_taints_add)} -{len(p.soft_taints_remove)}")
    return "; ".join(parts)


def _deleted(d: NodeToDelete) -> str:
    return f"{d.node.name} ({d.group}, empty)" if d.empty else f"{d.node.name} ({d.group}, drain: {d.reason})"


def _min_sizes_line(p: MinSizeRaises, _: Callable[[float], str]) -> str:
    return f"raise to min size: {_listed(f'{r.group} {r.target}->{r.target + r.delta}' for r in p.raises)}"


_LINES: Mapping[type, Callable[[Any, Callable[[float], str]], str]] = {
    Notices: _notices_line,
    TaintRemovals: _taint_removals_line,
    ClusterStateFindings: _findings_line,
    UnregisteredRemovals: _unregistered_line,
    FailedInstanceRemovals: _failed_instances_line,
    PartialDeliveryRemovals: _partial_deliveries_line,
    SizeFixes: _size_fixes_line,
    DrainRound: _drain_line,
    ScaleUpDecision: _scale_up_line,
    ScaleDownPlan: _scale_down_line,
    MinSizeRaises: _min_sizes_line,
}
