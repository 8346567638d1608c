"""The Kubernetes API writes the autoscalers make, as one port: :class:`ClusterPort`.

The cluster autoscaler and the batch autoscaler act on the cluster through this port only (the cloud
has its own, :mod:`kubetide.cloud.provider`). The simulator implements it on its simulated API server,
the live wing (:mod:`kubetide.live.actuation`) on a real one, tests with a recording fake.

Every write is a small, targeted change, never a replacement of a whole list: another controller may
have added a taint or an annotation between our read and our write, and it must survive ours (the live
adapter patches with optimistic concurrency and retries on conflict). Errors: a method raises
:class:`ApiError` when the write could not be made after the adapter's own retries (API server down,
forbidden, a conflict that kept recurring); the caller then knows nothing changed and decides again
next loop. :class:`NotFoundError` (an ``ApiError``) means the object is gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Protocol

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint

__all__ = ["ApiError", "ClusterPort", "EvictionOutcome", "NotFoundError"]


class ApiError(Exception):
    """A write failed after retries; nothing the caller can rely on changed."""


class NotFoundError(ApiError):
    """The object does not exist (any more)."""


class EvictionOutcome(StrEnum):
    EVICTED = "Evicted"  # the API accepted the eviction: the pod is terminating
    REFUSED = "Refused"  # 429 TooManyRequests: a PodDisruptionBudget holds it; retry later
    GONE = "Gone"  # the pod no longer exists: nothing left to evict


class ClusterPort(Protocol):
    """Writes to the API server. Node names are ``metadata.name``; pods are the views the loop read."""

    def add_node_taint(self, node: str, taint: Taint) -> None:
        """Add ``taint`` to ``node``, replacing a taint of the same key and effect; keep every other taint.

        NotFoundError when the node is gone; ApiError otherwise.
        """
        ...

    def remove_node_taint(self, node: str, key: str) -> None:
        """Remove every taint with ``key`` from ``node``; keep the others. No taint to remove is success.

        NotFoundError when the node is gone; ApiError otherwise.
        """
        ...

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        """Cordon (True) or uncordon (False) ``node`` (``spec.unschedulable``)."""
        ...

    def annotate_node(self, node: str, annotations: Mapping[str, str | None]) -> None:
        """Set (a string) or remove (None) each annotation; other annotations are kept."""
        ...

    def delete_node(self, node: str) -> None:
        """Delete the Node object. A node already gone is success (deletion is idempotent)."""
        ...

    def evict(self, pod: Pod, grace_period_s: int | None = None) -> EvictionOutcome:
        """The Eviction API (``policy/v1`` or ``v1beta1``): PDBs decide. ApiError on any other failure.

        ``grace_period_s``: the eviction's ``deleteOptions.gracePeriodSeconds`` (None: the pod's own
        ``terminationGracePeriodSeconds``); an accepted eviction leaves the pod Terminating that long
        (0: deleted at once)."""
        ...

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        """Record an Event (``type_`` Normal or Warning) on ``obj`` (``Kind/[namespace/]name``).

        Best effort, as client-go's recorder: never raises; an event that cannot be written is dropped
        and counted by the adapter.
        """
        ...
