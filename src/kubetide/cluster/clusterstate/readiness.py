"""Which readiness bucket each node is counted in, per node group and cluster-wide (CA spec §2.2).

Health, upcoming nodes and incorrect sizes are all computed from these counts. First match wins:
Deleted (no cloud instance), Suspended, Ready, NotStarted (not ready but younger than the max startup
time), Unready. Unregistered cloud instances are counted per group as Unregistered or, once older
than the max provision time, LongUnregistered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubetide.cluster.reasons import ReadinessBucket
from kubetide.model.node import NodeView

__all__ = ["NOT_READY_TAINTS", "Readiness", "classify_node", "is_node_ready", "unregistered_bucket"]

# Taints that, on their own, make CA's readiness check fail.
NOT_READY_TAINTS = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/network-unavailable",
    }
)
SUSPENDED_CONDITION_ANNOTATION = "kubetide.io/suspended"


def is_node_ready(node: NodeView) -> bool:
    """Ready condition True and none of the not-ready taints.

    :class:`NodeView` folds the Ready condition into ``ready``; DiskPressure / NetworkUnavailable
    conditions surface as their taints, which the node lifecycle controller always adds with them.
    """
    taints = node.taints  # most nodes have none: no generator then
    return node.ready and not (taints and any(t.key in NOT_READY_TAINTS for t in taints))


def classify_node(node: NodeView, now: float, max_node_startup_time: float, deleted: bool) -> ReadinessBucket:
    if deleted:
        return ReadinessBucket.DELETED
    # NodeView carries no arbitrary conditions; a Suspended=True condition is mirrored by this annotation.
    if node.annotations.get(SUSPENDED_CONDITION_ANNOTATION) == "true":
        return ReadinessBucket.SUSPENDED
    if is_node_ready(node):
        return ReadinessBucket.READY
    created = node.creation_time if node.creation_time is not None else float("-inf")
    if created + max_node_startup_time > now:
        return ReadinessBucket.NOT_STARTED
    return ReadinessBucket.UNREADY


def unregistered_bucket(since: float, now: float, max_node_provision_time: float) -> ReadinessBucket:
    if since + max_node_provision_time < now:
        return ReadinessBucket.LONG_UNREGISTERED
    return ReadinessBucket.UNREGISTERED


@dataclass(frozen=True, slots=True)
class Readiness:
    """Node names per bucket (``clusterstate.Readiness``); ``registered`` lists every registered node."""

    ready: tuple[str, ...] = ()
    unready: tuple[str, ...] = ()
    not_started: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    suspended: tuple[str, ...] = ()
    registered: tuple[str, ...] = ()
    unregistered: tuple[str, ...] = ()
    long_unregistered: tuple[str, ...] = ()
    resource_unready: tuple[str, ...] = field(default=())

    @classmethod
    def from_lists(
        cls, lists: Mapping[ReadinessBucket, Sequence[str]], registered: Sequence[str]
    ) -> Readiness:
        """From names per bucket (every bucket present) and the registered nodes' names."""
        return cls(
            ready=tuple(lists[ReadinessBucket.READY]),
            unready=tuple(lists[ReadinessBucket.UNREADY]),
            not_started=tuple(lists[ReadinessBucket.NOT_STARTED]),
            deleted=tuple(lists[ReadinessBucket.DELETED]),
            suspended=tuple(lists[ReadinessBucket.SUSPENDED]),
            registered=tuple(registered),
            unregistered=tuple(lists[ReadinessBucket.UNREGISTERED]),
            long_unregistered=tuple(lists[ReadinessBucket.LONG_UNREGISTERED]),
        )

    @classmethod
    def from_counts(cls, **counts: int) -> Readiness:
        """Synthetic names (``ready-0``...) for tests and what-ifs that only know counts."""
        kw = {k: tuple(f"{k}-{i}" for i in range(n)) for k, n in counts.items()}
        if "registered" not in kw:
            kw["registered"] = tuple(
                n for k in ("ready", "unready", "not_started", "deleted", "suspended") for n in kw.get(k, ())
            )
        return cls(**kw)
