"""Why a running cluster autoscaler deleted a node, or left a group alone (``kubetide explain
--cluster``): the record of each deletion a loop started, read from the loop's plan, and the text that
answers per node and per group, beside :func:`~kubetide.cluster.explain.render_text`'s answer per
loop.

A node deleted is gone from later loops, so its deletion is kept as a :class:`NodeDeletion`: why the
scale-down chose it (empty or underutilized, unneeded since when, its utilization, where the removal
simulation put each pod) and how the deletion ended (the node deleted, or the deletion abandoned and
why). "Why not group X" is read from a loop's scale-up: the group not considered and why, each
expander filter that did not keep it, and each pending pod's reason for that group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kubetide.cluster.explain import Explanation, ExplanationFormatError, format_time
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.reasons import EventReason

__all__ = [
    "GroupExplanation",
    "NodeDeletion",
    "deletions_started",
    "explain_group",
    "render_deletions",
    "render_group",
    "update_deletions",
]


@dataclass(frozen=True, slots=True)
class NodeDeletion:
    """One deletion a loop started: ``decided_at`` is that loop's time; ``deleted_at`` when its
    ``DeleteNodes`` was made (None: not yet, or abandoned: ``abandoned`` says why)."""

    node: str
    group: str
    decided_at: float
    empty: bool
    reason: str  # CA's scale-down reason: empty, underutilized, unready
    unneeded_since: float
    utilization: str
    moves: Mapping[str, str] = field(default_factory=dict)  # pod -> node, per the removal simulation
    deleted_at: float | None = None
    abandoned: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "group": self.group,
            "decidedAt": self.decided_at,
            "empty": self.empty,
            "reason": self.reason,
            "unneededSince": self.unneeded_since,
            "utilization": self.utilization,
            "moves": dict(self.moves),
            "deletedAt": self.deleted_at,
            "abandoned": self.abandoned,
        }

    @classmethod
    def from_json(cls, doc: Any, where: str) -> NodeDeletion:
        if not isinstance(doc, Mapping):
            raise ExplanationFormatError(f"{where}: must be a mapping")

        def get(key: str, *types: type) -> Any:
            value = doc.get(key)
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise ExplanationFormatError(
                    f"{where}.{key}: must be {' or '.join(t.__name__ for t in types)}"
                )
            return value

        moves = get("moves", dict)
        return cls(
            node=get("node", str),
            group=get("group", str),
            decided_at=float(get("decidedAt", int, float)),
            empty=get("empty", bool),
            reason=get("reason", str),
            unneeded_since=float(get("unneededSince", int, float)),
            utilization=get("utilization", str),
            moves={str(k): str(v) for k, v in moves.items()},
            deleted_at=None if doc.get("deletedAt") is None else float(get("deletedAt", int, float)),
            abandoned=None if doc.get("abandoned") is None else get("abandoned", str),
        )


def deletions_started(result: LoopResult, at: float) -> list[NodeDeletion]:
    """The deletions the loop at ``at`` started (its scale-down's nodes whose taint was made)."""
    plan = result.plan.scale_down if result.plan is not None else None
    if plan is None or not result.deletions_started:
        return []
    started = set(result.deletions_started)
    return [
        NodeDeletion(
            item.node.name,
            item.group,
            at,
            item.empty,
            item.reason,
            item.since,
            item.utilization,
            dict(item.moves),
        )
        for item in plan.delete
        if item.node.name in started
    ]


def update_deletions(
    deletions: Sequence[NodeDeletion], result: LoopResult, at: float, *, keep: int
) -> list[NodeDeletion]:
    """``deletions`` with what the loop or deletions pass at ``at`` did: the deletions it started added,
    those it finished or abandoned (a ``ScaleDownFailed`` event on the node) marked; the last ``keep``."""
    deleted = set(result.nodes_deleted)
    abandoned = {
        e.object.removeprefix("Node/"): e.message
        for e in result.events
        if e.reason == EventReason.SCALE_DOWN_FAILED and e.object.startswith("Node/")
    }
    out = []
    for d in deletions:
        if d.deleted_at is None and d.abandoned is None:
            if d.node in deleted:
                d = replace(d, deleted_at=at)
            elif d.node in abandoned:
                d = replace(d, abandoned=abandoned[d.node])
        out.append(d)
    out += deletions_started(result, at)
    return out[-keep:] if keep > 0 else []


def render_deletions(deletions: Sequence[NodeDeletion]) -> list[str]:
    """One entry per deletion, newest first."""
    out = []
    for d in reversed(deletions):
        how = "empty" if d.empty else f"{d.reason}, utilization {d.utilization}"
        out.append(
            f"  {d.node} (group {d.group}): scale-down chose it in the loop at {format_time(d.decided_at)}: "
            f"{how}, unneeded since {format_time(d.unneeded_since)}"
        )
        if d.moves:
            out.append(f"    its pods were to go to: {', '.join(f'{p} -> {n}' for p, n in d.moves.items())}")
        if d.deleted_at is not None:
            out.append(f"    deleted at {format_time(d.deleted_at)}")
        elif d.abandoned is not None:
            out.append(f"    deletion abandoned: {d.abandoned}")
        else:
            out.append("    being deleted (drained, or waiting for its next step)")
    return out


@dataclass(frozen=True, slots=True)
class GroupExplanation:
    """Every word a loop's scale-up said of one group: not considered (``skipped``), each expander
    filter given it (``expander``: filter, kept, its rating), its new size when chosen, each pending
    pod's reason it cannot go there (``refused``), and the pods whose scale-up included it."""

    group: str
    at: float
    scale_up_result: str
    skipped: tuple[str, ...] = ()
    expander: tuple[tuple[str, bool, str | None], ...] = ()
    chosen: tuple[int, int] | None = None
    refused: Mapping[str, str] = field(default_factory=dict)
    triggered: tuple[str, ...] = ()
    asked: bool = True  # False: no pending pod needed a new node, so no group was asked

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "loopTime": self.at,
            "scaleUpResult": self.scale_up_result,
            "notConsidered": list(self.skipped),
            "expander": [{"filter": f, "kept": k, "rating": r} for f, k, r in self.expander],
            "chosen": {"from": self.chosen[0], "to": self.chosen[1]} if self.chosen else None,
            "podsRefused": dict(self.refused),
            "podsTriggered": list(self.triggered),
        }


def explain_group(ex: Explanation, group: str) -> GroupExplanation:
    """What the loop of ``ex`` said of ``group``."""
    expander = []
    for step in ex.expander_steps:
        rated = dict(step.scores)
        if group in step.kept or group in rated:
            expander.append((step.name, group in step.kept, rated.get(group)))
    chosen = next(((a, b) for g, a, b in ex.chosen if g == group), None)
    return GroupExplanation(
        group,
        ex.at,
        ex.scale_up_result,
        tuple(ex.skipped_groups.get(group, ())),
        tuple(expander),
        chosen,
        {p.pod: p.per_group[group] for p in ex.pods if group in p.per_group},
        tuple(p.pod for p in ex.pods if p.triggered and _names(p.triggered, group)),
        asked=bool(ex.expander_steps or ex.skipped_groups or any(p.per_group for p in ex.pods)),
    )


def render_group(gx: GroupExplanation) -> list[str]:
    """Why the loop did or did not scale the group up."""
    out = [f"Group {gx.group} in the loop at {format_time(gx.at)} (scale-up: {gx.scale_up_result or '-'}):"]
    if gx.skipped:
        out.append(f"  not considered: {', '.join(gx.skipped)}")
    for name, kept, rating in gx.expander:
        rated = f" ({rating})" if rating is not None else ""
        out.append(f"  expander {name}: {'kept' if kept else 'not kept'}{rated}")
    if gx.chosen is not None:
        out.append(f"  chosen: {gx.chosen[0]} -> {gx.chosen[1]}")
    for pod, reason in gx.refused.items():
        out.append(f"  pod {pod} cannot go there: {reason}")
    for pod in gx.triggered:
        out.append(f"  pod {pod} triggered the scale-up")
    if len(out) == 1:
        out.append(
            "  no pending pod needed a new node: no group was asked"
            if not gx.asked
            else "  no option, or dropped by an expander filter that does not rate: no pending pod "
            "fits a new node of it, or another group was preferred"
        )
    return out


def _names(triggered: str, group: str) -> bool:
    """Whether a scale-up's text (``"g 1->3 (max: 5), h ..."``) names ``group``."""
    return any(part.strip().startswith(f"{group} ") for part in triggered.split(","))
