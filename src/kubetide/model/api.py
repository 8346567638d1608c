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

What a port offers beyond its methods it declares (:meth:`ClusterPort.capabilities`): the caller asks,
it does not probe the object's type, so a wrapper (the live guard) says what it offers itself and can
hide nothing of what it wraps by accident (one hid the ConfigMap writes once, and live CA kept no state).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint

__all__ = [
    "NO_CAPABILITIES",
    "ApiError",
    "ClusterPort",
    "ConfigMapWriter",
    "EventDataRecorder",
    "EvictionOutcome",
    "NotFoundError",
    "PortCapabilities",
]


class ApiError(Exception):
    """A write failed after retries; nothing the caller can rely on changed."""


class NotFoundError(ApiError):
    """The object does not exist (any more)."""


class EvictionOutcome(StrEnum):
    EVICTED = "Evicted"  # the API accepted the eviction: the pod is terminating
    REFUSED = "Refused"  # 429 TooManyRequests: a PodDisruptionBudget holds it; retry later
    GONE = "Gone"  # the pod no longer exists: nothing left to evict


class ConfigMapWriter(Protocol):
    """Writes a ConfigMap the autoscaler owns (its state, its learned templates), so a restarted
    autoscaler reads it back. ApiError: not written (the caller retries next loop)."""

    def write_config_map(self, namespace: str, name: str, data: Mapping[str, str]) -> None: ...


class EventDataRecorder(Protocol):
    """Records an event with its structured ``data`` too (the simulator's ``events.jsonl`` carries it);
    same promise as :meth:`ClusterPort.emit_event`: best effort, never raises."""

    def emit_event_with_data(
        self, type_: str, reason: str, obj: str, message: str, data: Mapping[str, Any]
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class PortCapabilities:
    """The optional capabilities of a :class:`ClusterPort`, each None when it does not offer it."""

    config_maps: ConfigMapWriter | None = None
    event_data: EventDataRecorder | None = None


NO_CAPABILITIES = PortCapabilities()


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

    def capabilities(self) -> PortCapabilities:
        """What this port offers beyond these methods (:class:`PortCapabilities`), declared."""
        ...
