"""How many nodes the CapacityQuotas allow: CA 1.36's quota tracker (``resourcequotas/tracker.go``,
``factory.go``, ``usage.go``), for the label-selected quotas.

A tracker is made per decision from the nodes the loop sees: for each quota, the usage of the nodes it
applies to (a node counts its capacity: cores, rounded up, memory bytes, 1 node, and its GPUs by type),
then what is left: ``max(0, limit - usage)`` for maximums, ``max(0, usage - limit)`` for minimums
(kubetide's minimums, :attr:`~kubetide.model.capacity.quota.CapacityQuota.minimums`).
:meth:`QuotaTracker.check` is ``CheckQuota``: for every quota that applies to the node, every resource
of the node that needs more than is left cuts the allowed count to ``left // per node`` and is named;
:meth:`QuotaTracker.consume` is ``ConsumeQuota``: the same check, and when the whole count is allowed,
it is taken from what is left. A resource a quota does not limit is not counted against it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kubetide.model.capacity.quota import CapacityQuota
from kubetide.model.node import NodeView

__all__ = ["CheckResult", "ExceededQuota", "NodeResources", "QuotaStatus", "QuotaTracker", "quota_message"]

# A node's resources as a quota counts them (``totalNodeResources``): the loop gives the function.
NodeResources = Callable[[NodeView], Mapping[str, int]]


@dataclass(frozen=True, slots=True)
class ExceededQuota:
    id: str
    resources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``CheckDeltaResult``: how many of the asked nodes fit, and which quotas ran out of what."""

    allowed: int
    exceeded: tuple[ExceededQuota, ...] = ()

    @property
    def is_exceeded(self) -> bool:
        return bool(self.exceeded)

    def messages(self) -> tuple[str, ...]:
        """``NewMaxResourceLimitReached``'s reasons, one per quota."""
        return tuple(quota_message(q) for q in self.exceeded)


def quota_message(quota: ExceededQuota) -> str:
    return f'exceeded quota: "{quota.id}", resources: {", ".join(quota.resources)}'


@dataclass(slots=True)
class QuotaStatus:
    """One quota as a tracker holds it: its limits, the usage it started from and what is left."""

    quota: CapacityQuota
    limits: Mapping[str, int]
    usage: dict[str, int]
    left: dict[str, int] = field(default_factory=dict)


class QuotaTracker:
    """The quotas of one decision; ``minimums``: a scale-down tracker (what may go, not what may come)."""

    def __init__(
        self,
        quotas: Sequence[CapacityQuota],
        nodes: Iterable[NodeView],
        resources_of: NodeResources,
        *,
        minimums: bool = False,
    ) -> None:
        self.resources_of = resources_of
        self.minimums = minimums
        chosen = [(q, q.minimums if minimums else q.limits) for q in quotas]
        self.statuses = [QuotaStatus(q, limits, {}) for q, limits in chosen if limits]
        for node in nodes:
            delta: Mapping[str, int] | None = None
            for status in self.statuses:
                if status.quota.applies_to(node.labels):
                    delta = delta if delta is not None else resources_of(node)
                    for resource, amount in delta.items():
                        status.usage[resource] = status.usage.get(resource, 0) + amount
        for status in self.statuses:
            for resource, limit in status.limits.items():
                used = status.usage.get(resource, 0)
                status.left[resource] = max(0, used - limit) if minimums else max(0, limit - used)

    def __bool__(self) -> bool:
        return bool(self.statuses)

    def _matching(self, node: NodeView) -> list[QuotaStatus]:
        return [s for s in self.statuses if s.quota.applies_to(node.labels)]

    def check(self, node: NodeView, count: int) -> CheckResult:
        """``CheckQuota`` for ``count >= 0`` nodes like ``node`` (a template node, or a node to remove)."""
        return _check(self.resources_of(node), self._matching(node), count)

    def consume(self, node: NodeView, count: int) -> CheckResult:
        """``ConsumeQuota``: :meth:`check`, and when all ``count`` fit, their resources are taken."""
        delta = self.resources_of(node)
        matching = self._matching(node)
        result = _check(delta, matching, count)
        if result.allowed != count:
            return result
        for status in matching:
            for resource, amount in delta.items():
                if resource in status.left:
                    status.left[resource] = max(status.left[resource] - count * amount, 0)
        return result


def _check(delta: Mapping[str, int], matching: Sequence[QuotaStatus], count: int) -> CheckResult:
    if count < 0:
        raise ValueError("negative nodeDelta received")
    allowed = count
    exceeded = []
    for status in matching:
        short = []
        for resource, amount in delta.items():
            if amount <= 0 or resource not in status.left:
                continue
            left = status.left[resource]
            if left < amount * count:
                allowed = min(allowed, left // amount)
                short.append(resource)
        if short:
            exceeded.append(ExceededQuota(status.quota.id, tuple(short)))
    return CheckResult(allowed, tuple(exceeded))
