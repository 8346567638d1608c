"""Escalator's taints: how a node is bucketed, which nodes to taint or untaint, and when it was tainted.

Scale-down marks the *oldest* untainted nodes with ``atlassian.com/escalator=<unix seconds>`` and
lets them drain; scale-up first takes the taint off the *newest* tainted nodes, because they are the
cheapest capacity to get back. An operator's ``atlassian.com/escalator-force`` taint marks a node
for deletion as soon as it is empty. Cordoned nodes sit out every calculation (except in dry mode,
where the in-memory trackers replace real taints and cordons are not looked at).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kubetide.model.node import NodeView
from kubetide.model.scheduling_terms import Taint

__all__ = [
    "FORCE_TAINT_KEY",
    "NO_DELETE_ANNOTATION",
    "TAINT_KEY",
    "NodeBuckets",
    "created_at",
    "escalator_bucket_nodes",
    "escalator_taint",
    "has_force_taint",
    "has_taint",
    "taint_oldest",
    "taint_time",
    "taint_value",
    "untaint_newest",
]

TAINT_KEY = "atlassian.com/escalator"
FORCE_TAINT_KEY = "atlassian.com/escalator-force"
# A non-empty value keeps a tainted node from ever being deleted; it is still counted and tainted.
NO_DELETE_ANNOTATION = "atlassian.com/no-delete"


def has_taint(node: NodeView) -> bool:
    return any(t.key == TAINT_KEY for t in node.taints)


def has_force_taint(node: NodeView) -> bool:
    return any(t.key == FORCE_TAINT_KEY for t in node.taints)


def taint_value(now: float) -> str:
    """The taint's value: Go's ``time.Now().Unix()``, whole seconds (floor for any real clock)."""
    return str(math.floor(now))


def escalator_taint(now: float, effect: str) -> Taint:
    """The removal taint added at ``now`` (effect ``taint_effect``, NoSchedule when unset)."""
    return Taint(TAINT_KEY, taint_value(now), effect or "NoSchedule")


def taint_time(node: NodeView) -> float | None:
    """When the node was tainted (unix seconds), or None if untainted or the value is not an integer."""
    for t in node.taints:
        if t.key == TAINT_KEY:
            try:
                return float(int(t.value, 10))
            except ValueError:
                return None
    return None


@dataclass(frozen=True, slots=True)
class NodeBuckets:
    """A group's nodes by state, each in lister order (upstream ``filterNodes``)."""

    untainted: tuple[NodeView, ...] = ()
    tainted: tuple[NodeView, ...] = ()
    force_tainted: tuple[NodeView, ...] = ()
    cordoned: tuple[NodeView, ...] = ()


def escalator_bucket_nodes(
    nodes: Sequence[NodeView],
    *,
    dry_mode: bool = False,
    taint_tracker: Collection[str] = (),
    force_taint_tracker: Collection[str] = (),
) -> NodeBuckets:
    """Cordoned, force-tainted (wins over tainted), tainted and untainted nodes."""
    untainted: list[NodeView] = []
    tainted: list[NodeView] = []
    forced: list[NodeView] = []
    cordoned: list[NodeView] = []
    for node in nodes:
        if dry_mode:
            is_forced, is_tainted = node.name in force_taint_tracker, node.name in taint_tracker
        else:
            if node.unschedulable:
                cordoned.append(node)
                continue
            is_forced, is_tainted = has_force_taint(node), has_taint(node)
        if is_forced:
            forced.append(node)
        elif is_tainted:
            tainted.append(node)
        else:
            untainted.append(node)
    return NodeBuckets(tuple(untainted), tuple(tainted), tuple(forced), tuple(cordoned))


def created_at(node: NodeView) -> float:
    """creationTimestamp in seconds; a node without one sorts as the oldest."""
    return node.creation_time if node.creation_time is not None else -math.inf


def taint_oldest(nodes: Sequence[NodeView], n: int) -> list[int]:
    """Indices (into ``nodes``) of the ``n`` oldest nodes, oldest first (upstream ``taintOldestN``).

    Upstream's sort is not stable; ties keep input order here so results are reproducible.
    """
    order = sorted(range(len(nodes)), key=lambda i: created_at(nodes[i]))
    return order[: max(n, 0)]


def untaint_newest(nodes: Sequence[NodeView], n: int, skip: Collection[str] = ()) -> list[int]:
    """Indices of up to ``n`` nodes, newest first, skipping the names in ``skip`` (unhealthy nodes
    when the health check is on): skipped nodes do not count toward ``n`` (``untaintNewestN``)."""
    order = sorted(range(len(nodes)), key=lambda i: -created_at(nodes[i]))
    return [i for i in order if nodes[i].name not in skip][: max(n, 0)]
