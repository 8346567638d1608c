"""``metav1.Condition`` as the capacity APIs' statuses hold them, and apimachinery's rules for changing one.

:func:`set_status_condition` is ``meta.SetStatusCondition``: a new type is appended; an existing one
keeps its ``lastTransitionTime`` unless its status changes, and takes the new reason, message and
observed generation. :func:`replace_condition` is the ProvisioningRequest's ``AddOrUpdateCondition``
(``provisioningrequest/conditions``): the condition is replaced whole, its time reset every time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from kubetide.model.fields import Node

__all__ = [
    "Condition",
    "find_condition",
    "format_time",
    "is_condition_false",
    "is_condition_true",
    "parse_conditions",
    "replace_condition",
    "set_status_condition",
]

TRUE, FALSE = "True", "False"
STATUSES = (TRUE, FALSE, "Unknown")


def format_time(t: float) -> str:
    """``metav1.Time`` as it is serialized: RFC 3339 with whole seconds, UTC."""
    return datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: float = 0.0
    observed_generation: int = 0

    @classmethod
    def parse(cls, node: Node) -> Condition:
        return cls(
            type=node.get("type").str(),
            status=node.get("status").enum(STATUSES),
            reason=node.get("reason").str(""),
            message=node.get("message").str(""),
            last_transition_time=node.get("lastTransitionTime").time(0.0),
            observed_generation=node.get("observedGeneration").int(0),
        )

    def to_manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "status": self.status,
            "lastTransitionTime": format_time(self.last_transition_time),
            "reason": self.reason,
            "message": self.message,
        }
        if self.observed_generation:
            out["observedGeneration"] = self.observed_generation
        return out


def parse_conditions(node: Node) -> tuple[Condition, ...]:
    return tuple(Condition.parse(c) for c in node.list())


def find_condition(conditions: Sequence[Condition], kind: str) -> Condition | None:
    return next((c for c in conditions if c.type == kind), None)


def is_condition_true(conditions: Sequence[Condition], kind: str) -> bool:
    found = find_condition(conditions, kind)
    return found is not None and found.status == TRUE


def is_condition_false(conditions: Sequence[Condition], kind: str) -> bool:
    found = find_condition(conditions, kind)
    return found is not None and found.status == FALSE


def set_status_condition(
    conditions: Sequence[Condition], new: Condition
) -> tuple[tuple[Condition, ...], bool]:
    """``meta.SetStatusCondition``: the conditions with ``new`` set, and whether anything changed."""
    out = list(conditions)
    for i, old in enumerate(out):
        if old.type != new.type:
            continue
        updated = old
        if old.status != new.status:
            updated = replace(updated, status=new.status, last_transition_time=new.last_transition_time)
        updated = replace(
            updated, reason=new.reason, message=new.message, observed_generation=new.observed_generation
        )
        out[i] = updated
        return tuple(out), updated != old
    out.append(new)
    return tuple(out), True


def replace_condition(conditions: Sequence[Condition], new: Condition) -> tuple[Condition, ...]:
    """``AddOrUpdateCondition``: ``new`` in place of the condition of its type (appended if none)."""
    out = [new if c.type == new.type else c for c in conditions]
    if not any(c.type == new.type for c in conditions):
        out.append(new)
    return tuple(out)
