"""The HPA's metrics port over the API server's aggregated metrics APIs, as kube-controller-manager
reads them (``pkg/controller/podautoscaler/metrics/client.go``).

- ``metrics.k8s.io/v1beta1`` PodMetrics, listed in the namespace by label selector: per container
  usage as ``MilliValue()`` (CPU in millicores, memory in milli-bytes), summed over the containers
  (a pod with no containers or one lacking the resource has no sample) or of one named container
  (pods without it, or without the resource, have no sample); ``timestamp`` as seconds since the
  epoch and ``window`` in seconds.
- ``custom.metrics.k8s.io`` (``v1beta1`` by default; ``v1beta2`` read too): per-pod metrics at
  ``pods/*/<metric>``, object metrics at ``<resource>.<group>/<name>/<metric>`` (``kinds.py``), a
  Namespace's at ``metrics/<metric>``.
- ``external.metrics.k8s.io/v1beta1``: ``namespaces/NS/<metric>?labelSelector=``.

Errors carry upstream's messages, which the controller embeds in its conditions and events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetide.hpa.ports import NEVER, MetricsError, PodMetric
from kubetide.live.hpa.api import ApiFailure, KubeApi
from kubetide.live.hpa.kinds import resource_for
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.fields import parse_time
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.quantity import QuantityError, parse_quantity
from kubetide.model.selectors import LabelSelector

__all__ = ["ApiMetricsSource"]

RESOURCE_METRICS = "/apis/metrics.k8s.io/v1beta1"
EXTERNAL_METRICS = "/apis/external.metrics.k8s.io/v1beta1"
DEFAULT_CUSTOM_WINDOW = 60.0  # metricServerDefaultMetricWindow, when a custom sample has no window


class ApiMetricsSource:
    """``MetricsSource`` over metrics.k8s.io, custom.metrics.k8s.io and external.metrics.k8s.io."""

    def __init__(self, api: KubeApi, *, custom_metrics_version: str = "v1beta1") -> None:
        self.api = api
        self.custom_prefix = f"/apis/custom.metrics.k8s.io/{custom_metrics_version}"

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        path = f"{RESOURCE_METRICS}/namespaces/{namespace}/pods"
        items = self._items(path, {"labelSelector": str(selector)}, "resource metrics API")
        if not items:
            raise MetricsError("no metrics returned from resource metrics API")
        try:
            return {
                item["metadata"]["name"]: sample
                for item in items
                if (sample := _pod_sample(item, resource, container)) is not None
            }
        except (KeyError, TypeError, ValueError) as exc:
            raise MetricsError(
                f"unable to fetch metrics from resource metrics API: malformed PodMetrics: {exc}"
            ) from None

    def pod_metrics(
        self, namespace: str, name: str, selector: LabelSelector, metric_selector: LabelSelector | None
    ) -> Mapping[str, PodMetric]:
        path = f"{self.custom_prefix}/namespaces/{namespace}/pods/*/{name}"
        params = {"labelSelector": str(selector), **_metric_params(metric_selector)}
        items = self._items(path, params, "custom metrics API")
        if not items:
            raise MetricsError("no metrics returned from custom metrics API")
        try:
            return {
                item["describedObject"]["name"]: PodMetric(
                    _milli(item["value"]),
                    _time(item.get("timestamp")),
                    float(item["windowSeconds"])
                    if item.get("windowSeconds") is not None
                    else DEFAULT_CUSTOM_WINDOW,
                )
                for item in items
            }
        except (KeyError, TypeError, ValueError) as exc:
            raise MetricsError(
                f"unable to fetch metrics from custom metrics API: malformed value: {exc}"
            ) from None

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        ref = described_object
        resource = resource_for(ref.api_version, ref.kind)
        if ref.kind == "Namespace" and resource.group == "":
            # Upstream ignores the object's name: an HPA can't reach outside its namespace.
            path = f"{self.custom_prefix}/namespaces/{namespace}/metrics/{name}"
        else:
            path = f"{self.custom_prefix}/namespaces/{namespace}/{resource.qualified}/{ref.name}/{name}"
        items = self._items(path, _metric_params(metric_selector), "custom metrics API")
        if len(items) != 1:
            raise MetricsError(
                "unable to fetch metrics from custom metrics API: the custom metrics API server returned "
                f"{len(items)} results when we asked for exactly one"
            )
        try:
            return _milli(items[0]["value"])
        except (KeyError, TypeError, ValueError) as exc:
            raise MetricsError(
                f"unable to fetch metrics from custom metrics API: malformed value: {exc}"
            ) from None

    def external_metric(
        self, namespace: str, name: str, metric_selector: LabelSelector | None
    ) -> Sequence[int]:
        path = f"{EXTERNAL_METRICS}/namespaces/{namespace}/{name}"
        params = (
            {"labelSelector": str(metric_selector)} if metric_selector and not metric_selector.empty else {}
        )
        items = self._items(path, params, "external metrics API")
        if not items:
            raise MetricsError("no metrics returned from external metrics API")
        try:
            return [_milli(item["value"]) for item in items]
        except (KeyError, TypeError, ValueError) as exc:
            raise MetricsError(
                f"unable to fetch metrics from external metrics API: malformed value: {exc}"
            ) from None

    def _items(self, path: str, params: Mapping[str, str], api_name: str) -> list[Any]:
        try:
            body = self.api.get(path, params)
        except ApiFailure as exc:
            raise MetricsError(f"unable to fetch metrics from {api_name}: {exc}") from None
        items = body.get("items") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise MetricsError(f"unable to fetch metrics from {api_name}: the response has no items list")
        return items


def _pod_sample(item: Any, resource: str, container: str) -> PodMetric | None:
    containers = item.get("containers") or []
    if container:
        match = next((c for c in containers if c.get("name") == container), None)
        if match is None or resource not in (match.get("usage") or {}):
            return None
        value = _milli(match["usage"][resource])
    else:
        if not containers or any(resource not in (c.get("usage") or {}) for c in containers):
            return None
        value = sum(_milli(c["usage"][resource]) for c in containers)
    window = item.get("window")
    return PodMetric(value, _time(item.get("timestamp")), _window(window) if window else 0.0)


def _metric_params(metric_selector: LabelSelector | None) -> dict[str, str]:
    if metric_selector is None or metric_selector.empty:
        return {}
    return {"metricLabelSelector": str(metric_selector)}


def _milli(text: Any) -> int:
    """A quantity's ``MilliValue()``; QuantityError is a ValueError for the callers."""
    try:
        return parse_quantity(text).milli
    except QuantityError as exc:
        raise ValueError(str(exc)) from None


def _time(text: Any) -> float:
    return parse_time(text) if isinstance(text, str) and text else NEVER


def _window(text: Any) -> float:
    try:
        return parse_duration(text)
    except DurationError as exc:
        raise ValueError(str(exc)) from None
