"""The ports the HPA acts through: where metrics come from, the scale target, and where events go.

The simulator and the live adapter implement these; tests use in-memory fakes. Methods raise
:class:`MetricsError` / :class:`ScaleError` for failures the controller reports as conditions.
The controller reads through the first two; the loop driver (``hpa/driver.py``) writes the scale and
emits the events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = [
    "EventPort",
    "MetricsError",
    "MetricsSource",
    "PodMetric",
    "Scale",
    "ScaleError",
    "ScaleTargetPort",
]

NEVER = float("-inf")  # Go's zero time: older than anything


class MetricsError(Exception):
    """The metrics API failed or returned nothing; the message is what the controller reports."""


class ScaleError(Exception):
    """Reading or writing the scale subresource failed."""


@dataclass(frozen=True, slots=True)
class PodMetric:
    """One pod's sample: value in milli-units, when it was taken, and the window it averages over."""

    value: int
    timestamp: float = NEVER
    window: float = 0.0


@dataclass(frozen=True, slots=True)
class Scale:
    """The scale subresource: ``spec.replicas``, ``status.replicas`` and ``status.selector`` (string form)."""

    spec_replicas: int
    status_replicas: int
    selector: str


class MetricsSource(Protocol):
    """metrics.k8s.io, custom.metrics.k8s.io and external.metrics.k8s.io, as the HPA reads them."""

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        """Per-pod usage of ``resource`` (summed over containers, or of one ``container``).

        Pods with no sample are absent. Raises MetricsError when the API fails or returns no items.
        """
        ...

    def pod_metrics(
        self, namespace: str, name: str, selector: LabelSelector, metric_selector: LabelSelector | None
    ) -> Mapping[str, PodMetric]:
        """A custom per-pod metric. Raises MetricsError when it fails or returns no items."""
        ...

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        """A custom metric of one object, in milli-units. Raises MetricsError on failure."""
        ...

    def external_metric(
        self, namespace: str, name: str, metric_selector: LabelSelector | None
    ) -> Sequence[int]:
        """All series of an external metric, milli-units. Raises MetricsError on failure or none."""
        ...


class ScaleTargetPort(Protocol):
    """The scale subresource of HPA targets, and the pods their selectors match."""

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        """Raises ScaleError when the target or its scale subresource can't be read."""
        ...

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        """Sets ``spec.replicas``. Raises ScaleError on failure (its message goes into FailedRescale)."""
        ...

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        """Pods in ``namespace`` matching ``selector`` (the controller's pod lister). Never raises for an
        empty match (an empty sequence); the sequence must not be modified afterwards by anyone.

        The cache contract the fast path relies on (``PodIndex``, the selector verdicts): while the
        matching pods are unchanged, return the *same sequence object* (by identity); whenever any of
        them changed (added, removed, or any field of one), return a *new* object. The controller keys
        its per-pod-list caches on that identity, so an implementation that breaks the second half
        serves stale pods. One that returns a fresh, equal list on every call is correct, only slower
        (every sync then classifies the pods again).
        """
        ...


class EventPort(Protocol):
    """Kubernetes Events on HPA objects; the same method as ``kubetide.model.api.ClusterPort``."""

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        """Record an Event (``type_`` Normal or Warning) on ``obj`` (``Kind/[namespace/]name``).

        Best effort, as client-go's recorder: never raises; an event that cannot be written is dropped
        (and counted by the adapter).
        """
        ...
