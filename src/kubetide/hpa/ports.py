"""The two ports the HPA controller acts through: where metrics come from, and the scale target.

The simulator and the live adapter implement these; tests use in-memory fakes. Methods raise
:class:`MetricsError` / :class:`ScaleError` for failures the controller reports as conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = ["MetricsError", "MetricsSource", "PodMetric", "Scale", "ScaleError", "ScaleTargetPort"]

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
        """Sets ``spec.replicas``. Raises ScaleError on failure."""
        ...

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        """Pods in ``namespace`` matching ``selector`` (the controller's pod lister)."""
        ...
