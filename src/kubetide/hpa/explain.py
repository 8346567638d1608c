"""Explaining one HPA sync to a person: the numbers behind each metric's proposal, the tolerance check,
which stabilization window or rate limit shaped the result, the memory it started from, the conditions
and events.

``report(decision, result)`` is one sync as a plain dict (``hpa explain --json``, the live
controller's ``/debug/hpa``); ``explain(snapshot)`` and ``explain_ports`` reconcile one HPA and report
it; ``render(report)`` turns a report into text and ``render_compact`` into the few lines the live
controller logs per sync at ``-v=4``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.decision import RESCALED, HPADecision, MetricOutcome, SyncResult
from kubetide.hpa.ports import MetricsSource, ScaleTargetPort
from kubetide.hpa.snapshot import HPASnapshot
from kubetide.hpa.state import HPAState, ScaleEvent
from kubetide.model.hpa import HPA, MetricTarget

_OUTCOME_TEXT = {
    "within-tolerance": "within tolerance: keep the current count",
    "scaled": "outside tolerance: ceil(ratio x ready pods)",
    "rebalanced": "recomputed with missing/unready pods filled in: ceil(new ratio x samples)",
    "direction-flipped": "filling in missing/unready pods flips the direction: keep the current count",
    "against-ratio": "the recomputed count moves against the ratio: keep the current count",
    "from-zero": "scaling from zero: ceil(ratio)",
}


def explain(snapshot: HPASnapshot) -> dict[str, Any]:
    controller = HorizontalController(snapshot.metrics, snapshot.targets, snapshot.config)
    controller.restore(snapshot.hpa.key, snapshot.state)
    decision = controller.decide(snapshot.hpa, snapshot.now)
    return report(decision, controller.complete(decision, controller.write(decision), snapshot.now))


def explain_ports(
    hpa: HPA,
    metrics: MetricsSource,
    targets: ScaleTargetPort,
    config: HPAConfig,
    state: HPAState,
    now: float,
) -> dict[str, Any]:
    """Explain ``hpa`` over any ports (a real cluster, recorded API answers). Nothing is written: the
    decision is completed as if its scale write had succeeded."""
    controller = HorizontalController(metrics, targets, config)
    controller.restore(hpa.key, state)
    decision = controller.decide(hpa, now)
    return report(decision, controller.complete(decision, RESCALED if decision.rescale else None, now))


def _events_before(events: tuple[ScaleEvent, ...], now: float) -> list[dict[str, Any]]:
    return [{"replica_change": e.replica_change, "seconds_ago": now - e.timestamp} for e in events]


def _target_text(target: MetricTarget | None) -> str:
    if target is None:
        return "no target"
    if target.average_utilization is not None and target.average_value is None:
        return f"{target.average_utilization}% of request"
    if target.average_value is not None:
        return f"average {target.average_value}"
    return f"value {target.value}"


def _metric(outcome: MetricOutcome, index: int) -> dict[str, Any]:
    spec = outcome.spec
    out: dict[str, Any] = {
        "index": index,
        "type": spec.type,
        "name": outcome.name or spec.display_name,
        "target": _target_text(spec.target),
    }
    if outcome.replicas is None:
        out.update(failed=True, reason=outcome.failure_reason, message=outcome.failure_message)
        return out
    calc = outcome.calculation
    out["proposal"] = outcome.replicas
    if calc is not None:
        out.update(
            ratio=calc.ratio,
            outcome=calc.outcome,
            explanation=_OUTCOME_TEXT.get(calc.outcome, calc.outcome),
            pods={
                "ready": calc.ready_count,
                "unready": calc.unready,
                "missing": calc.missing,
                "ignored": calc.ignored,
            },
        )
        if calc.new_ratio is not None:
            out["new_ratio"] = calc.new_ratio
    return out


def report(decision: HPADecision, result: SyncResult) -> dict[str, Any]:
    """One sync explained: ``decision`` as ``HorizontalController.decide`` made it, ``result`` as
    ``complete`` finished it."""
    hpa, now, remembered = decision.hpa, decision.now, decision.remembered
    norm = result.normalization
    out: dict[str, Any] = {
        "hpa": hpa.key,
        "target": f"{hpa.scale_target_ref.kind}/{hpa.scale_target_ref.name}",
        "min_replicas": hpa.min_replicas,
        "max_replicas": hpa.max_replicas,
        "current_replicas": result.current_replicas,
        "behavior": hpa.behavior is not None,
        "tolerance": None
        if result.tolerances is None
        else {"down": result.tolerances[0], "up": result.tolerances[1]},
        "metrics": [_metric(m, i) for i, m in enumerate(result.metrics)],
        "recommendations_before": [
            {"replicas": r.replicas, "seconds_ago": now - r.timestamp}
            for r in remembered.recommendations or ()
        ],
        "scale_events_before": {
            "up": _events_before(remembered.scale_up_events, now),
            "down": _events_before(remembered.scale_down_events, now),
        },
        "normalization": None,
        "desired_replicas": result.desired_replicas,
        "scaled": result.scaled,
        "reason": result.rescale_reason,
        "error": result.error,
        "conditions": [
            {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
            for c in result.status.conditions
        ],
        "events": [{"type": e.type, "reason": e.reason, "message": e.message} for e in result.events],
    }
    if norm is not None:
        out["normalization"] = {
            "proposal": norm.proposal,
            "stabilized": norm.stabilized,
            "stabilization": norm.stabilization_reason,
            "limited_to": norm.desired,
            "limit": norm.limit_reason,
            "limit_message": norm.limit_message,
            "path": "behavior" if norm.with_behavior else "default (no behavior)",
        }
    return out


def render(report: dict[str, Any]) -> str:
    lines = [
        f"HPA {report['hpa']} -> {report['target']}  (min {report['min_replicas']}, max {report['max_replicas']})"
    ]
    if "now" in report:
        when = datetime.fromtimestamp(report["now"]["time"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines.append(f"  now: {when} ({report['now']['from']})")
    if "memory" in report:
        lines.append(f"  controller memory: {report['memory']['from']}")
    current = report["current_replicas"]
    lines.append(f"  current replicas: {current if current is not None else 'unknown (scale unreadable)'}")
    tol = report["tolerance"]
    if tol is not None:
        lines.append(
            f"  tolerance: ratio within [{1 - tol['down']:.3f}, {1 + tol['up']:.3f}] keeps the count "
            f"(down {tol['down'] * 100:.1f}%, up {tol['up'] * 100:.1f}%)"
        )
    if report["metrics"]:
        lines.append("")
        lines.append("Metrics")
    for m in report["metrics"]:
        head = f"  {m['index'] + 1}. {m['name']} (target {m['target']})"
        if m.get("failed"):
            lines.append(f"{head}: FAILED {m['reason']}: {m['message']}")
            continue
        lines.append(f"{head}: proposes {m['proposal']}")
        if "ratio" in m:
            pods = m["pods"]
            lines.append(
                f"       ratio {m['ratio']:.4f}; pods {pods['ready']} ready, {pods['unready']} unready, "
                f"{pods['missing']} missing a sample, {pods['ignored']} ignored"
            )
            if "new_ratio" in m:
                lines.append(f"       ratio with fill-ins {m['new_ratio']:.4f}")
            lines.append(f"       {m['explanation']}")
    norm = report["normalization"]
    if norm is not None:
        lines.append("")
        lines.append(f"Normalization ({norm['path']})")
        lines.append(f"  proposal over all metrics (max): {norm['proposal']}")
        if report["recommendations_before"]:
            lines.append(f"  remembered recommendations: {_recommendations_text(report)}")
        for direction, events in _events_text(report):
            lines.append(f"  remembered scale-{direction} events: {events}")
        lines.append(f"  after stabilization: {norm['stabilized']} ({norm['stabilization']})")
        lines.append(f"  after limits: {norm['limited_to']} ({norm['limit']}: {norm['limit_message']})")
    lines.append("")
    if report["scaled"]:
        lines.append(
            f"Decision: scale {current} -> {report['desired_replicas']} (reason: {report['reason']})"
        )
    else:
        lines.append(f"Decision: no change (desired {report['desired_replicas']})")
    if report["error"]:
        lines.append(f"Error: {report['error']}")
    lines.append("")
    lines.append("Conditions")
    for c in report["conditions"]:
        lines.append(f"  {c['type']:<15} {c['status']:<6} {c['reason']:<22} {c['message']}")
    if report["events"]:
        lines.append("")
        lines.append("Events")
        for e in report["events"]:
            lines.append(f"  {e['type']:<8} {e['reason']:<24} {e['message']}")
    return "\n".join(lines)


def _ago(seconds: float) -> str:
    """A time before now to the tenth of a second (the live controller's clock has microseconds)."""
    return f"{round(seconds, 1):g}s ago"


def _recommendations_text(report: dict[str, Any]) -> str:
    return ", ".join(f"{r['replicas']}@{_ago(r['seconds_ago'])}" for r in report["recommendations_before"])


def _events_text(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(direction, its events as text) for each direction with remembered scale events."""
    before = report.get("scale_events_before") or {}
    out = []
    for direction, sign in (("up", "+"), ("down", "-")):
        events = before.get(direction) or []
        if events:
            out.append(
                (
                    direction,
                    ", ".join(f"{sign}{e['replica_change']}@{_ago(e['seconds_ago'])}" for e in events),
                )
            )
    return out


def render_compact(report: dict[str, Any]) -> str:
    """A few lines per sync: the decision, each metric's proposal, the normalization, the memory."""
    current, desired = report["current_replicas"], report["desired_replicas"]
    if report["scaled"]:
        head = f"{report['hpa']}: {current} -> {desired} ({report['reason']})"
    elif current is None:
        head = f"{report['hpa']}: scale unreadable, desired stays {desired}"
    else:
        head = f"{report['hpa']}: stays at {current} (desired {desired})"
    lines = [head]
    for m in report["metrics"]:
        name = f"metric {m['index'] + 1} {m['name']} (target {m['target']})"
        if m.get("failed"):
            lines.append(f"  {name}: FAILED {m['reason']}: {m['message']}")
        elif "ratio" in m:
            pods = m["pods"]
            lines.append(
                f"  {name}: proposes {m['proposal']} (ratio {m['ratio']:.4f}; {pods['ready']} ready, "
                f"{pods['unready']} unready, {pods['missing']} missing, {pods['ignored']} ignored; "
                f"{m['outcome']})"
            )
        else:
            lines.append(f"  {name}: proposes {m['proposal']}")
    norm = report["normalization"]
    if norm is not None:
        lines.append(
            f"  normalization ({norm['path']}): proposal {norm['proposal']}, stabilized {norm['stabilized']} "
            f"({norm['stabilization']}), limited {norm['limited_to']} ({norm['limit']})"
        )
    memory = [f"recommendations {_recommendations_text(report)}"] if report["recommendations_before"] else []
    memory += [f"scale-{direction} events {events}" for direction, events in _events_text(report)]
    if memory:
        lines.append(f"  remembered: {'; '.join(memory)}")
    if report["error"]:
        lines.append(f"  error: {report['error']}")
    return "\n".join(lines)
