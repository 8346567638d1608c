"""The CapacityQuota controller (``--capacity-quotas-enabled``): each quota's status, as CA 1.36's
``resourcequotas/capacityquota/controller.go`` reconciles it.

A quota that reads is ``Valid`` (``ValidationSucceeded``) and ``Reconciled`` (``ReconciliationSucceeded``),
with ``status.used.resources``: for each resource it limits, the sum of the ``status.capacity`` of the
nodes it selects (``nodes``: how many). One that does not read (its selector, a limit that is not an
integer) is ``Valid=False`` (``ValidationFailed``, with why) and ``Reconciled=False``, and is not enforced
(CA's provider takes only Valid quotas). Conditions change as ``meta.SetStatusCondition`` changes them;
a status is written only when it changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubetide.cluster.capacity.objects import BrokenObject, CapacityWrite
from kubetide.model.capacity.conditions import Condition, set_status_condition
from kubetide.model.capacity.quota import CapacityQuota
from kubetide.model.node import NodeView
from kubetide.model.quantity import format_milli
from kubetide.model.resources import CPU

__all__ = ["format_amount", "quota_status_writes", "quota_usage"]

VALID, RECONCILED = "Valid", "Reconciled"
_BINARY = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))


def format_amount(resource: str, amount: int) -> str:
    """An amount as a quantity's text: cpu from milli-units (``8``, ``1500m``), others in the largest
    binary unit that divides them (``32Gi``), else plain."""
    if resource == CPU:
        return format_milli(amount)
    if amount:
        for suffix, shift in _BINARY:
            if amount % (1 << shift) == 0:
                return f"{amount >> shift}{suffix}"
    return str(amount)


def quota_usage(quota: CapacityQuota, nodes: Sequence[NodeView]) -> dict[str, str]:
    """``calculateResourceUsage``: what the selected nodes' capacity adds up to, per limited resource."""
    selected = [n for n in nodes if quota.applies_to(n.labels)]
    used = {}
    for resource in quota.limits:
        if resource == "nodes":
            used[resource] = str(len(selected))
        else:
            used[resource] = format_amount(resource, sum(n.capacity[resource] for n in selected))
    return used


def _conditions(
    old: tuple[Condition, ...],
    valid: tuple[str, str, str],
    reconciled: tuple[str, str, str],
    now: float,
    gen: int,
) -> tuple[Condition, ...]:
    out, _ = set_status_condition(old, Condition(VALID, *valid, now, gen))
    out, _ = set_status_condition(out, Condition(RECONCILED, *reconciled, now, gen))
    return out


def _write(name: str, api_version: str, body: dict[str, Any]) -> CapacityWrite:
    return CapacityWrite("status", "CapacityQuota", None, name, api_version, body)


def quota_status_writes(
    quotas: Sequence[CapacityQuota], broken: Sequence[BrokenObject], nodes: Sequence[NodeView], now: float
) -> list[CapacityWrite]:
    """The status of every quota, written where it changed."""
    writes = []
    for quota in quotas:
        conditions = _conditions(
            quota.conditions,
            ("True", "ValidationSucceeded", "CapacityQuota is valid"),
            ("True", "ReconciliationSucceeded", "CapacityQuota successfully reconciled"),
            now,
            quota.generation,
        )
        used = quota_usage(quota, nodes)
        if conditions != quota.conditions or used != dict(quota.used or {}):
            body = {"used": {"resources": used}, "conditions": [c.to_manifest() for c in conditions]}
            writes.append(_write(quota.name, quota.api_version, body))
    for obj in broken:
        if obj.kind != "CapacityQuota":
            continue
        conditions = _conditions(
            obj.conditions,
            ("False", "ValidationFailed", obj.message),
            ("False", "ReconciliationFailed", "Validation failed"),
            now,
            obj.generation,
        )
        if conditions != obj.conditions:
            writes.append(
                _write(obj.name, obj.api_version, {"conditions": [c.to_manifest() for c in conditions]})
            )
    return writes
