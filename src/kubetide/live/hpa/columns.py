"""What ``kubectl get hpa`` prints in its REFERENCE and TARGETS columns, for a kubetide
HorizontalPodAutoscaler's status, so ``kubectl get khpa`` prints what ``kubectl get hpa`` does.

A custom resource's printer column is one JSONPath: kubectl computes ``Deployment/web`` and
``76%/50%`` for the built-in kind only (``printHorizontalPodAutoscaler`` and ``formatHPAMetrics`` in
kubectl 1.20's ``pkg/printers/internalversion/printers.go``). So the controller writes both strings
into the status it owns (``status.reference``, ``status.targets``) and the CRD's columns read them.
The format is kubectl 1.20's: ``current/target`` per metric (``<unknown>`` before a value is known,
``(avg)`` for an Object or External average target, a Resource utilization in ``%``), the first two
metrics joined by ``, `` and ``+ N more...`` for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetide.model.hpa import HPA, MetricSpec
from kubetide.model.quantity import Quantity

__all__ = ["reference_column", "targets_column"]

UNKNOWN = "<unknown>"
MAX_SHOWN = 2  # formatHPAMetrics' "max"
_KEYS = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods"}
_KEYS |= {"Object": "object", "External": "external"}


def reference_column(hpa: HPA) -> str:
    ref = hpa.scale_target_ref
    return f"{ref.kind}/{ref.name}"


def targets_column(hpa: HPA, current_metrics: Sequence[Mapping[str, Any]]) -> str:
    if not hpa.metrics:
        return "<none>"
    shown = [_one(spec, _current(current_metrics, i, spec.type)) for i, spec in enumerate(hpa.metrics)]
    if len(shown) > MAX_SHOWN:
        return f"{', '.join(shown[:MAX_SHOWN])} + {len(shown) - MAX_SHOWN} more..."
    return ", ".join(shown)


def _current(statuses: Sequence[Mapping[str, Any]], i: int, type_: str) -> Mapping[str, Any] | None:
    """The i-th status's ``current`` for a metric of ``type_`` (kubectl pairs spec and status by index)."""
    if i >= len(statuses):
        return None
    source = statuses[i].get(_KEYS.get(type_, ""))
    current = source.get("current") if isinstance(source, Mapping) else None
    return current if isinstance(current, Mapping) else None


def _text(value: object) -> str:
    return UNKNOWN if value is None else str(value)


def _one(spec: MetricSpec, current: Mapping[str, Any] | None) -> str:
    target = spec.target
    if target is None:
        return "<unknown type>"
    now = current or {}
    if spec.type in ("External", "Object"):
        if target.average_value is not None:
            return f"{_text(now.get('averageValue'))}/{_q(target.average_value)} (avg)"
        return f"{_text(now.get('value'))}/{_q(target.value)}"
    if spec.type == "Pods":
        return f"{_text(now.get('averageValue'))}/{_q(target.average_value)}"
    if spec.type in ("Resource", "ContainerResource"):
        if target.average_value is not None:
            return f"{_text(now.get('averageValue'))}/{_q(target.average_value)}"
        utilization = now.get("averageUtilization")
        shown = UNKNOWN if utilization is None else f"{utilization}%"
        wanted = "<auto>" if target.average_utilization is None else f"{target.average_utilization}%"
        return f"{shown}/{wanted}"
    return "<unknown type>"


def _q(quantity: Quantity | None) -> str:
    return _text(quantity)
