"""Whether the nodes of a best-effort-atomic ProvisioningRequest's scale-up all came (kubetide; CA does
not look).

CA 1.36 marks such a request Provisioned once the cloud accepted the increase
(``provisioningrequest/besteffortatomic``), and nothing looks again: when fewer nodes register than were
asked for (part of a launch failed, the scale-up timed out after ``--max-node-provision-time``, the cloud
rolled the increase back), the request stays Provisioned, its booking holds nodes that are not there,
and the nodes that did come sit half-used until scale-down finds them unneeded. All-or-nothing was
asked for; that is part of it.

kubetide follows each such scale-up (:class:`Delivery`) until every group it raised has registered the
nodes asked for. It fails when, before that, a group's scale-up is registered failed (its instances'
creation errors, or its time out), its target falls below what the increase set (the cloud, or a size
fix, dropped the rest), or ``--max-node-provision-time`` passes. Then (:func:`judge`): the request is
Provisioned False (``CapacityPartiallyProvisioned``, so it is retried after its backoff, as a request
whose capacity was not found) and the nodes that came for it and run no pod but DaemonSet and mirror
pods are deleted at once; a node that already runs a pod is left to scale-down, never evicted here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubetide.cloud.instance import CloudProviderError
from kubetide.cluster.loop.view import LoopView
from kubetide.model.node import NodeView
from kubetide.scheduling.utilization import is_daemonset_pod, is_mirror_pod

__all__ = ["PARTIAL_REASON", "Delivery", "Verdict", "judge", "start_delivery"]

PARTIAL_REASON = "CapacityPartiallyProvisioned"


@dataclass(frozen=True, slots=True)
class Delivery:
    """An atomic request's scale-up in flight: each group's target after it, the nodes each group had
    registered before it, when it started and when its nodes are due."""

    request: str  # namespace/name
    targets: Mapping[str, int]
    before: Mapping[str, frozenset[str]]
    started: float
    deadline: float


@dataclass(frozen=True, slots=True)
class Verdict:
    """A delivery that ended: ``why`` it failed ("" when every node came); ``empty``, by group, the
    nodes that came for it and run nothing of their own (deleted when it failed)."""

    delivery: Delivery
    why: str
    empty: Mapping[str, tuple[NodeView, ...]]


def _registered(view: LoopView, group: str) -> list[NodeView]:
    return [n for n in view.nodes if view.group_of.get(n.name) == group]


def start_delivery(
    request: str, targets: Mapping[str, int], view: LoopView, now: float, provision_time: float
) -> Delivery:
    before = {g: frozenset(n.name for n in _registered(view, g)) for g in targets}
    return Delivery(request, dict(targets), before, now, now + provision_time)


def judge(delivery: Delivery, view: LoopView, failed: Mapping[str, float], now: float) -> Verdict | None:
    """The delivery's end, or None while its nodes may still come. ``failed``: each group's latest
    failed scale-up (its time), as the cluster state registered it."""
    registered = {g: _registered(view, g) for g in delivery.targets}
    missing = {g: t - len(registered[g]) for g, t in delivery.targets.items() if len(registered[g]) < t}
    if not missing:
        return Verdict(delivery, "", {})
    why = ""
    for group in sorted(missing):
        if failed.get(group, float("-inf")) >= delivery.started:
            why = f"the scale-up of node group {group} failed"
            break
        lowered = _target(view, group)
        if lowered is not None and lowered < delivery.targets[group]:
            why = f"node group {group}'s target fell to {lowered} (from {delivery.targets[group]})"
            break
    if not why and now > delivery.deadline:
        why = "they did not register within --max-node-provision-time"
    if not why:
        return None
    short = ", ".join(f"{g} {m}" for g, m in sorted(missing.items()))
    empty = {
        g: tuple(n for n in registered[g] if n.name not in delivery.before[g] and _runs_nothing(view, n))
        for g in delivery.targets
    }
    return Verdict(delivery, f"nodes missing ({short}): {why}", {g: ns for g, ns in empty.items() if ns})


def _target(view: LoopView, group: str) -> int | None:
    found = view.groups.get(group)
    if found is None:
        return None
    try:
        return found.target_size()
    except CloudProviderError:
        return None  # not knowing is not a failure


def _runs_nothing(view: LoopView, node: NodeView) -> bool:
    return all(is_daemonset_pod(p) or is_mirror_pod(p) for p in view.pods_by_node.get(node.name, ()))
