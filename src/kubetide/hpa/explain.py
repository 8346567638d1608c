"""Explaining one HPA sync to a person: the numbers behind each metric's proposal, the tolerance check,
which stabilization window or rate limit shaped the result, the conditions and events.

``explain(snapshot)`` reconciles the snapshot and returns a plain dict (the ``--json`` output);
``render(report)`` turns it into text.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.decision import RESCALED, MetricOutcome, SyncResult
from kubetide.hpa.ports import MetricsSource, ScaleTargetPort
from kubetide.hpa.snapshot import HPASnapshot
from kubetide.hpa.state import HPAState
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
    before = _remembered(snapshot.state, snapshot.now)  # the controller updates the state it is given
    controller = HorizontalController(snapshot.metrics, snapshot.targets, snapshot.config)
    controller.restore(snapshot.hpa.key, snapshot.state)
    result = controller.reconcile(snapshot.hpa, snapshot.now)
    return _report(snapshot.hpa, result, before)


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
    before = _remembered(state, now)
    controller = HorizontalController(metrics, targets, config)
    controller.restore(hpa.key, state)
    decision = controller.decide(hpa, now)
    result = controller.complete(decision, RESCALED if decision.rescale else None, now)
    return _report(hpa, result, before)


def _remembered(state: HPAState, now: float) -> list[dict[str, Any]]:
    return [{"replicas": r.replicas, "seconds_ago": now - r.timestamp} for r in state.recommendations or []]


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


def _report(hpa: HPA, result: SyncResult, recommendations: list[dict[str, Any]]) -> dict[str, Any]:
    norm = result.normalization
    report: dict[str, Any] = {
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
        "recommendations_before": recommendations,
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
        report["normalization"] = {
            "proposal": norm.proposal,
            "stabilized": norm.stabilized,
            "stabilization": norm.stabilization_reason,
            "limited_to": norm.desired,
            "limit": norm.limit_reason,
            "limit_message": norm.limit_message,
            "path": "behavior" if norm.with_behavior else "default (no behavior)",
        }
    return report


def render(report: dict[str, Any]) -> str:
    lines = [
        f"HPA {report['hpa']} -> {report['target']}  (min {report['min_replicas']}, max {report['max_replicas']})"
    ]
    if "now" in report:
        when = datetime.fromtimestamp(report["now"]["time"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines.append(f"  now: {when} ({report['now']['from']})")
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
            recs = ", ".join(
                f"{r['replicas']}@{r['seconds_ago']:g}s ago" for r in report["recommendations_before"]
            )
            lines.append(f"  remembered recommendations: {recs}")
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
