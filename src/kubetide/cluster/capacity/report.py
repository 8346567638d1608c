"""What the capacity features did in one loop, for ``kubetide explain`` and the status ConfigMap.

:class:`CapacityReport` (in ``LoopResult.capacity``): per CapacityQuota its limits, the usage the loop
counted and what is left (maximums; kubetide's minimums beside them); per CapacityBuffer how many fake
pods it injected, how many fit on existing or upcoming nodes (so keep those nodes) and how many asked
for new ones, or why it injected none; per ProvisioningRequest worked on, its class and conditions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BufferReport", "CapacityReport", "QuotaReport", "RequestReport"]


@dataclass(frozen=True, slots=True)
class QuotaReport:
    id: str
    limits: Mapping[str, int]
    used: Mapping[str, int]
    left: Mapping[str, int]
    minimums: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "limits": dict(self.limits),
            "used": dict(self.used),
            "left": dict(self.left),
        }
        if self.minimums:
            out["minimums"] = dict(self.minimums)
        return out


@dataclass(frozen=True, slots=True)
class BufferReport:
    buffer: str  # namespace/name
    injected: int
    fit: int  # on existing or upcoming nodes: those nodes stay
    pending: int  # fit nowhere: they ask for a scale-up
    reason: str = ""  # why none was injected (the Provisioning condition's reason)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "buffer": self.buffer,
            "injected": self.injected,
            "fit": self.fit,
            "pending": self.pending,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class RequestReport:
    request: str  # namespace/name
    class_name: str
    conditions: Mapping[str, str]  # type -> "Status (Reason)"

    def to_json(self) -> dict[str, Any]:
        return {"request": self.request, "class": self.class_name, "conditions": dict(self.conditions)}


@dataclass(frozen=True, slots=True)
class CapacityReport:
    quotas: tuple[QuotaReport, ...] = ()
    buffers: tuple[BufferReport, ...] = ()
    requests: tuple[RequestReport, ...] = ()
    mode: str = ""  # "provisioning-requests" when the loop's scale-up served requests, else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "quotas": [q.to_json() for q in self.quotas],
            "buffers": [b.to_json() for b in self.buffers],
            "provisioningRequests": [r.to_json() for r in self.requests],
            "mode": self.mode,
        }
