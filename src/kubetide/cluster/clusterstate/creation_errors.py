"""Failed instance creations: which errors are new this loop and what CA says about them (CA spec §2.7).

An instance in state Creating with an ErrorInfo failed to come up (a stockout, a quota). New failures
of a group that is scaling up shrink its request and back it off at once, instead of waiting for the
provision timeout: that is CA's fast failover to the next node group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubetide.cloud.instance import Instance, InstanceErrorInfo

__all__ = ["CreationErrorGroup", "creation_error_groups", "scale_up_failed_message"]


@dataclass(frozen=True, slots=True)
class CreationErrorGroup:
    """Instances of one group failing with one ``(class, code)``; ``unseen`` were not failing last loop."""

    error: InstanceErrorInfo
    instance_ids: tuple[str, ...]
    unseen_ids: tuple[str, ...]
    messages: tuple[str, ...]


def creation_error_groups(
    instances: Iterable[Instance], previously_failing: frozenset[str]
) -> list[CreationErrorGroup]:
    by_key: dict[tuple[int, str], list[Instance]] = {}
    for inst in instances:
        if inst.has_creation_error:
            assert inst.status is not None and inst.status.error_info is not None
            info = inst.status.error_info
            by_key.setdefault((int(info.error_class), info.error_code), []).append(inst)
    out = []
    for members in by_key.values():
        first = members[0].status
        assert first is not None and first.error_info is not None
        messages: list[str] = []
        for m in members:
            assert m.status is not None and m.status.error_info is not None
            if m.status.error_info.error_message not in messages:
                messages.append(m.status.error_info.error_message)
        out.append(
            CreationErrorGroup(
                error=first.error_info,
                instance_ids=tuple(m.id for m in members),
                unseen_ids=tuple(m.id for m in members if m.id not in previously_failing),
                messages=tuple(messages),
            )
        )
    return out


def scale_up_failed_message(group: str, failure: CreationErrorGroup, count: int) -> str:
    """The ``ScaleUpFailed`` event text: at most three distinct source errors, then ", ..."."""
    shown = ", ".join(failure.messages[:3]) + (", ..." if len(failure.messages) > 3 else "")
    return f"Failed adding {count} nodes to group {group} due to {failure.error.key}; source errors: {shown}"


def failing_ids(groups: Mapping[str, list[CreationErrorGroup]]) -> frozenset[str]:
    return frozenset(i for gs in groups.values() for g in gs for i in g.instance_ids)
