"""Why the cluster autoscaler decided what it did in one loop, from that loop's own decision values
(``kubetide explain``): nothing here decides again, it reads what the loop recorded.

- **Pending pods**: the scale-up a pod triggered, or, per node group, the first reason it could not
  go there (the group skipped and why, or the scheduler filter that refuses the group's template);
- **Scale-up**: the groups considered and skipped, each expander filter in ``--expander`` order with
  the groups it kept, and the groups and sizes chosen;
- **Nodes**: unneeded since when, or the eligibility rule that keeps the node (CA's unremovable
  reasons), with the blocking pod and its drain rule (a PDB shows as ``NotEnoughPdb``);
- **Capacity** (when a capacity flag is on): each CapacityQuota's limits, usage and what is left, each
  CapacityBuffer's fake pods (how many fit on the nodes there are, how many asked for new ones, or why
  none was injected), each ProvisioningRequest worked on and its conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubetide.cluster.capacity.report import CapacityReport
from kubetide.cluster.expander import ExpanderStep
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.world import World
from kubetide.cluster.reasons import EventReason

__all__ = [
    "Explanation",
    "ExplanationFormatError",
    "NodeExplanation",
    "PodExplanation",
    "explain_loop",
    "format_time",
    "render_text",
]


@dataclass(frozen=True)
class PodExplanation:
    pod: str
    triggered: str | None  # the scale-up it triggered ("group a 1->3, ..."); None: it did not
    per_group: Mapping[str, str] = field(default_factory=dict)  # group -> the first reason it cannot go there
    scheduled_by_upcoming: bool = False  # fits nodes already on their way: nothing to do


@dataclass(frozen=True)
class NodeExplanation:
    node: str
    unneeded_since: float | None
    reason: str | None  # the unremovable reason (CA's UnremovableReason), None when unneeded
    blocking_pod: str | None = None
    blocking_reason: str | None = None  # the drain rule that blocks (CA's BlockingPodReason)
    not_candidate: str | None = None  # why scale-down did not look at the node at all


@dataclass(frozen=True)
class Explanation:
    at: float  # the loop's time
    scale_up_result: str
    scale_down_result: str
    pods: tuple[PodExplanation, ...]
    skipped_groups: Mapping[str, tuple[str, ...]]
    expander_steps: tuple[ExpanderStep, ...]
    chosen: tuple[tuple[str, int, int], ...]  # (group, from, to)
    nodes: tuple[NodeExplanation, ...]
    capacity: CapacityReport | None = None  # None: no capacity flag on

    def to_json(self) -> dict[str, Any]:
        out = {
            "loopTime": self.at,
            "scaleUp": {
                "result": self.scale_up_result,
                "skippedGroups": {g: list(r) for g, r in self.skipped_groups.items()},
                "expander": [
                    {"filter": s.name, "kept": list(s.kept), "ratings": dict(s.scores)}
                    for s in self.expander_steps
                ],
                "chosen": [{"group": g, "from": a, "to": b} for g, a, b in self.chosen],
            },
            "pods": [
                {
                    "pod": p.pod,
                    "triggeredScaleUp": p.triggered,
                    "fitsUpcomingNodes": p.scheduled_by_upcoming,
                    "groups": dict(p.per_group),
                }
                for p in self.pods
            ],
            "scaleDown": {
                "result": self.scale_down_result,
                "nodes": [
                    {
                        "node": n.node,
                        "unneededSince": n.unneeded_since,
                        "unremovableReason": n.reason,
                        "blockingPod": n.blocking_pod,
                        "blockingPodReason": n.blocking_reason,
                        "notCandidate": n.not_candidate,
                    }
                    for n in self.nodes
                ],
            },
        }
        if self.capacity is not None:
            out["capacity"] = self.capacity.to_json()
        return out

    @classmethod
    def from_json(cls, doc: Any, where: str = "") -> Explanation:
        """The explanation :meth:`to_json` wrote (``kubetide explain --cluster`` reads it from a running
        kubetide); raises :class:`ExplanationFormatError` naming the first field that is not as written."""
        read = _Reader(where)
        up, down = read.mapping(doc, "scaleUp"), read.mapping(doc, "scaleDown")
        return cls(
            at=read.number(doc, "loopTime"),
            scale_up_result=read.text(up, "scaleUp.result"),
            scale_down_result=read.text(down, "scaleDown.result"),
            pods=tuple(
                PodExplanation(
                    read.text(p, f"pods[{i}].pod"),
                    read.text_or_none(p, f"pods[{i}].triggeredScaleUp"),
                    read.texts(p, f"pods[{i}].groups"),
                    bool(p.get("fitsUpcomingNodes")),
                )
                for i, p in enumerate(read.mappings(doc, "pods"))
            ),
            skipped_groups={
                g: tuple(str(r) for r in reasons)
                for g, reasons in read.mapping(up, "scaleUp.skippedGroups").items()
            },
            expander_steps=tuple(
                ExpanderStep(
                    read.text(s, f"scaleUp.expander[{i}].filter"),
                    tuple(str(g) for g in s.get("kept") or ()),
                    tuple(read.texts(s, f"scaleUp.expander[{i}].ratings").items()),
                )
                for i, s in enumerate(read.mappings(up, "scaleUp.expander"))
            ),
            chosen=tuple(
                (
                    read.text(c, f"scaleUp.chosen[{i}].group"),
                    int(read.number(c, f"scaleUp.chosen[{i}].from")),
                    int(read.number(c, f"scaleUp.chosen[{i}].to")),
                )
                for i, c in enumerate(read.mappings(up, "scaleUp.chosen"))
            ),
            nodes=tuple(
                NodeExplanation(
                    read.text(n, f"scaleDown.nodes[{i}].node"),
                    read.number_or_none(n, f"scaleDown.nodes[{i}].unneededSince"),
                    read.text_or_none(n, f"scaleDown.nodes[{i}].unremovableReason"),
                    read.text_or_none(n, f"scaleDown.nodes[{i}].blockingPod"),
                    read.text_or_none(n, f"scaleDown.nodes[{i}].blockingPodReason"),
                    read.text_or_none(n, f"scaleDown.nodes[{i}].notCandidate"),
                )
                for i, n in enumerate(read.mappings(down, "scaleDown.nodes"))
            ),
        )


class ExplanationFormatError(ValueError):
    """A document is not what :meth:`Explanation.to_json` writes; the message names the field."""


class _Reader:
    """Reads one field of a document by its dotted path (the last part is the key), or says which."""

    def __init__(self, where: str) -> None:
        self.where = where

    def _get(self, doc: Any, path: str) -> Any:
        if not isinstance(doc, Mapping):
            raise self._wrong(path.rpartition(".")[0] or "(document)", "a mapping")
        return doc.get(path.rpartition(".")[2])

    def _wrong(self, path: str, expected: str) -> ExplanationFormatError:
        where = f"{self.where}: " if self.where else ""
        return ExplanationFormatError(f"{where}{path}: must be {expected}")

    def mapping(self, doc: Any, path: str) -> Mapping[str, Any]:
        value = self._get(doc, path)
        if not isinstance(value, Mapping):
            raise self._wrong(path, "a mapping")
        return value

    def mappings(self, doc: Any, path: str) -> list[Mapping[str, Any]]:
        value = self._get(doc, path)
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            raise self._wrong(path, "a list of mappings")
        return value

    def texts(self, doc: Any, path: str) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.mapping(doc, path).items()}

    def text(self, doc: Any, path: str) -> str:
        value = self._get(doc, path)
        if not isinstance(value, str):
            raise self._wrong(path, "a string")
        return value

    def text_or_none(self, doc: Any, path: str) -> str | None:
        return None if self._get(doc, path) is None else self.text(doc, path)

    def number(self, doc: Any, path: str) -> float:
        value = self._get(doc, path)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._wrong(path, "a number")
        return float(value)

    def number_or_none(self, doc: Any, path: str) -> float | None:
        return None if self._get(doc, path) is None else self.number(doc, path)


def _pending(world: World) -> list[str]:
    return sorted(
        f"{p.namespace}/{p.name}"
        for p in world.pods
        if not p.node_name and p.phase == "Pending" and p.deletion_time is None
    )


def explain_loop(result: LoopResult, at: float, world: World) -> Explanation:
    """What ``result`` (the loop at ``at``, on ``world``) recorded, per pending pod and per node."""
    decision = result.scale_up
    plan = decision.plan if decision is not None else None
    triggered: dict[str, str] = {}
    if plan is not None and plan.infos:
        what = ", ".join(f"{i.group} {i.current_size}->{i.new_size} (max: {i.max_size})" for i in plan.infos)
        triggered = {f"{p.namespace}/{p.name}": what for p in plan.pods_triggered}
    refused: dict[str, dict[str, str]] = {}
    events = decision.not_triggered() if decision is not None else ()
    for e in (*events, *(e for e in result.events if e.reason == EventReason.NOT_TRIGGER_SCALE_UP)):
        pod = e.object.removeprefix("Pod/")
        if pod in triggered or pod in refused:
            continue
        groups = e.data.get("groups") or {}
        refused[pod] = {str(g): str(reasons[0]) for g, reasons in groups.items() if reasons}
        if not refused[pod]:
            refused[pod] = {"(all groups)": e.message.removeprefix("pod didn't trigger scale-up: ")}
    helped = {f"{p.namespace}/{p.name}" for p in decision.pods} if decision is not None else set()
    pods = tuple(
        PodExplanation(
            pod,
            triggered.get(pod),
            refused.get(pod, {}),
            scheduled_by_upcoming=pod not in helped and pod not in triggered and pod not in refused,
        )
        for pod in _pending(world)
    )
    chosen = tuple((i.group, i.current_size, i.new_size) for i in plan.infos) if plan is not None else ()
    nodes = []
    for n in sorted(world.nodes, key=lambda n: n.name):
        blocking = result.blocking_pods.get(n.name)
        nodes.append(
            NodeExplanation(
                n.name,
                result.unneeded.get(n.name),
                result.unremovable.get(n.name),
                blocking[0] if blocking else None,
                blocking[1] if blocking else None,
                result.not_candidates.get(n.name),
            )
        )
    return Explanation(
        at,
        result.scale_up_result,
        result.scale_down_result,
        pods,
        dict(plan.skipped) if plan is not None else {},
        decision.expander_trace if decision is not None else (),
        chosen,
        tuple(nodes),
        result.capacity,
    )


def render_text(
    ex: Explanation, pods: Sequence[str] | None = None, nodes: Sequence[str] | None = None
) -> str:
    """The explanation for people; ``pods`` / ``nodes`` narrow it (None: all of them)."""
    out = [f"Cluster autoscaler loop at {format_time(ex.at)}"]
    if nodes is None or pods is not None:
        out.append("")
        out.append(f"Scale-up: {ex.scale_up_result or '-'}")
        for g, reasons in sorted(ex.skipped_groups.items()):
            out.append(f"  group {g} not considered: {', '.join(reasons)}")
        for step in ex.expander_steps:
            rated = dict(step.scores)
            kept = ", ".join(f"{g} ({rated[g]})" if g in rated else g for g in step.kept) or "none"
            line = f"  expander {step.name}: kept {kept}"
            dropped = [f"{g} ({how})" for g, how in step.scores if g not in step.kept]
            if dropped:
                line += f"; not {', '.join(dropped)}"
            out.append(line)
        for g, a, b in ex.chosen:
            out.append(f"  chosen: group {g} {a} -> {b}")
        shown = [p for p in ex.pods if pods is None or p.pod in pods]
        if shown:
            out.append("")
            out.append("Pending pods:")
        for p in shown:
            if p.triggered:
                out.append(f"  {p.pod}: triggered scale-up {p.triggered}")
            elif p.per_group:
                out.append(f"  {p.pod}: did not trigger a scale-up:")
                for g, r in sorted(p.per_group.items()):
                    out.append(f"    {g}: {r}")
            else:
                out.append(
                    f"  {p.pod}: fits nodes already on their way (or too new to be considered): no scale-up needed"
                )
    if pods is None or nodes is not None:
        out.append("")
        out.append(f"Scale-down: {ex.scale_down_result or '-'}")
        for n in ex.nodes:
            if nodes is not None and n.node not in nodes:
                continue
            if n.unneeded_since is not None:
                out.append(f"  {n.node}: unneeded since {format_time(n.unneeded_since)}")
            elif n.reason is not None:
                line = f"  {n.node}: kept: {n.reason}"
                if n.blocking_pod:
                    line += f" (pod {n.blocking_pod}: {n.blocking_reason})"
                out.append(line)
            elif n.not_candidate is not None:
                out.append(f"  {n.node}: not a candidate: {n.not_candidate}")
            else:
                out.append(f"  {n.node}: not evaluated this loop")
    if ex.capacity is not None and (pods is None and nodes is None):
        out.extend(_capacity_lines(ex.capacity))
    return "\n".join(out) + "\n"


def _capacity_lines(report: CapacityReport) -> list[str]:
    out = ["", "Capacity:" + (" (this loop's scale-up served ProvisioningRequests)" if report.mode else "")]
    for q in report.quotas:
        parts = [
            f"{r} {q.used.get(r, 0)} of {limit} used, {q.left.get(r, 0)} left"
            for r, limit in sorted(q.limits.items())
        ]
        out.append(f"  {q.id}: {'; '.join(parts) or 'no limits'}")
        if q.minimums:
            kept = ", ".join(f"{r} at least {v}" for r, v in sorted(q.minimums.items()))
            out.append(f"    kubetide minimums: {kept}")
    for b in report.buffers:
        if b.injected:
            out.append(
                f"  CapacityBuffer/{b.buffer}: {b.injected} fake pods, {b.fit} fit on the nodes there are, "
                f"{b.pending} ask for new nodes"
            )
        else:
            out.append(f"  CapacityBuffer/{b.buffer}: no fake pod ({b.reason})")
    for r in report.requests:
        conditions = ", ".join(f"{k} {v}" for k, v in r.conditions.items())
        out.append(f"  ProvisioningRequest/{r.request} ({r.class_name}): {conditions}")
    return out


def format_time(t: float) -> str:
    """Simulated time as h:mm:ss; a wall-clock time (a snapshot's) as RFC 3339."""
    if t >= 10 * 365 * 86400:
        return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    seconds = int(t)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
