"""A cluster captured with kubectl, answering the HPA's reads as the API server would.

``kubetide hpa explain -f`` takes what a user can print from their cluster: ``kubectl get
hpa,deployments,pods -o yaml`` (a ``List``, several documents, or single objects) and the metrics APIs'
answers (``kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/NS/pods``, a custom metrics
``MetricValueList``, an ``ExternalMetricValueList``). The recorded objects are served over HTTP paths by
:meth:`RecordedCluster.handle` (an ``httpx`` transport handler), so the explanation reads them through
the very ports live mode uses (:class:`~kubetide.live.hpa.metrics_api.ApiMetricsSource`,
:class:`~kubetide.live.hpa.scale.ApiScaleTargets`): the same parsing, the same error messages.

Served: the scale subresource of Deployments, ReplicaSets, StatefulSets and ReplicationControllers
(``spec.replicas``, ``status.replicas``, the selector as a string, as their scale subresource gives);
PodMetrics filtered by ``labelSelector`` (on the PodMetrics' labels, else the recorded pod's); custom
per-pod and per-object metrics by metric name and described object; external metrics by name and
``labelSelector`` on the series' labels. Anything else is a 404, as for an API that is not served.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

import httpx2

from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.fields import parse_time
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector, parse_selector_string

__all__ = ["RecordedCluster", "RecordedPods", "split_objects"]

_TARGETS = {
    ("apps", "deployments"): "Deployment",
    ("apps", "replicasets"): "ReplicaSet",
    ("apps", "statefulsets"): "StatefulSet",
    ("", "replicationcontrollers"): "ReplicationController",
}
_METRIC_LISTS = {"PodMetricsList", "MetricValueList", "ExternalMetricValueList"}


def split_objects(documents: Iterable[Any], source: str) -> list[dict[str, Any]]:
    """Every object of the documents, ``List`` / ``*List`` documents unpacked (their items keep the
    list's kind for metric lists, which carry no kind per item)."""
    out: list[dict[str, Any]] = []
    problems: list[FieldError] = []
    for d, doc in enumerate(documents):
        if doc is None:
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
            problems.append(FieldError(f"{source}[{d}]", "must be a Kubernetes object with a kind"))
            continue
        kind = doc["kind"]
        if kind in _METRIC_LISTS:
            for item in doc.get("items") or []:
                if isinstance(item, dict):
                    out.append({**item, "kind": item.get("kind") or kind.removesuffix("List")})
        elif kind == "List" or (kind.endswith("List") and isinstance(doc.get("items"), list)):
            out.extend(split_objects(doc.get("items") or [], f"{source}[{d}].items"))
        else:
            out.append(doc)
    if problems:
        raise ManifestError(problems)
    return out


def _selector_text(target: Mapping[str, Any]) -> str:
    """The label selector of a workload as its scale subresource's ``status.selector`` string."""
    selector = (target.get("spec") or {}).get("selector") or {}
    if target.get("kind") == "ReplicationController":  # a plain map
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


class RecordedPods:
    """``PodStore`` over the recorded pods."""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self._pods = pods

    def pods(self, namespace: str) -> Sequence[Pod]:
        return [p for p in self._pods if p.namespace == namespace]

    def version(self, namespace: str) -> int:
        return 0


class RecordedCluster:
    def __init__(self, objects: Sequence[dict[str, Any]]) -> None:
        self.objects = objects
        self.pod_labels = {
            (str(_meta(o).get("namespace", "")), str(_meta(o).get("name", ""))): dict(
                _meta(o).get("labels") or {}
            )
            for o in objects
            if o.get("kind") == "Pod"
        }

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o.get("kind") == kind]

    def newest_sample(self) -> float | None:
        """The newest metric timestamp: when the metrics were read, as near as the files tell."""
        times = []
        for o in self.objects:
            if o.get("kind") in ("PodMetrics", "MetricValue", "ExternalMetricValue"):
                stamp = o.get("timestamp")
                if isinstance(stamp, str):
                    try:
                        times.append(parse_time(stamp))
                    except ValueError:
                        continue
        return max(times) if times else None

    # --- the transport ------------------------------------------------------------------------------

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        path = unquote(request.url.path).strip("/").split("/")
        params = dict(request.url.params)
        try:
            body = self._route(path, params)
        except ManifestError as exc:
            return _status(400, f"invalid label selector: {exc}")
        if body is None:
            return _status(404, "the server could not find the requested resource")
        return httpx2.Response(200, json=body)

    def _route(self, path: list[str], params: Mapping[str, str]) -> Any:
        if "namespaces" not in path:
            return None
        prefix = path[:3] if path[0] == "apis" else path[:2]
        rest = path[len(prefix) :]
        if len(rest) < 2 or rest[0] != "namespaces":
            return None
        namespace, rest = rest[1], rest[2:]
        group = prefix[1] if prefix[0] == "apis" else ""
        if group == "metrics.k8s.io" and rest == ["pods"]:
            return self._pod_metrics(namespace, params)
        if group == "custom.metrics.k8s.io":
            return self._custom(namespace, rest, params)
        if group == "external.metrics.k8s.io" and len(rest) == 1:
            return self._external(namespace, rest[0], params)
        if len(rest) == 3 and rest[2] == "scale":
            return self._scale(namespace, group, rest[0], rest[1])
        return None

    def _scale(self, namespace: str, group: str, resource: str, name: str) -> Any:
        kind = _TARGETS.get((group, resource))
        target = next(
            (
                o
                for o in self.of_kind(kind or "")
                if _meta(o).get("namespace", "") == namespace and _meta(o).get("name") == name
            ),
            None,
        )
        if target is None:
            return None
        spec, status = target.get("spec") or {}, target.get("status") or {}
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": spec.get("replicas", 1)},
            "status": {"replicas": status.get("replicas", 0), "selector": _selector_text(target)},
        }

    def _labels(self, item: Mapping[str, Any], namespace: str, pod: str) -> Mapping[str, str]:
        own = _meta(item).get("labels")
        return own if isinstance(own, dict) else self.pod_labels.get((namespace, pod), {})

    def _pod_metrics(self, namespace: str, params: Mapping[str, str]) -> Any:
        selector = _selector(params.get("labelSelector", ""))
        items = [
            o
            for o in self.of_kind("PodMetrics")
            if _meta(o).get("namespace", namespace) == namespace
            and selector.matches(self._labels(o, namespace, str(_meta(o).get("name", ""))))
        ]
        return {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "items": items}

    def _custom(self, namespace: str, rest: list[str], params: Mapping[str, str]) -> Any:
        if len(rest) != 3:
            return None
        resource, name, metric = rest
        metric_selector = _selector(params.get("metricLabelSelector", ""))
        items = []
        for o in self.of_kind("MetricValue"):
            described = o.get("describedObject") or {}
            if _metric_name(o) != metric or described.get("namespace", namespace) != namespace:
                continue
            if not metric_selector.matches(_series_labels(o)):
                continue
            if resource == "pods" and name == "*":
                if described.get("kind") != "Pod":
                    continue
                selector = _selector(params.get("labelSelector", ""))
                if not selector.matches(self._labels({}, namespace, str(described.get("name", "")))):
                    continue
            elif described.get("name") != name:
                continue
            items.append(o)
        return {"kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta1", "items": items}

    def _external(self, namespace: str, metric: str, params: Mapping[str, str]) -> Any:
        selector = _selector(params.get("labelSelector", ""))
        items = [
            o
            for o in self.of_kind("ExternalMetricValue")
            if o.get("metricName") == metric and selector.matches(o.get("metricLabels") or {})
        ]
        return {
            "kind": "ExternalMetricValueList",
            "apiVersion": "external.metrics.k8s.io/v1beta1",
            "items": items,
        }


def _metric_name(item: Mapping[str, Any]) -> str:
    metric = item.get("metric")  # v1beta2
    if isinstance(metric, dict):
        return str(metric.get("name", ""))
    return str(item.get("metricName", ""))


def _series_labels(item: Mapping[str, Any]) -> Mapping[str, str]:
    metric = item.get("metric")
    if isinstance(metric, dict):
        selector = metric.get("selector") or {}
        return dict(selector.get("matchLabels") or {})
    return {}


def _selector(text: str) -> LabelSelector:
    return parse_selector_string(text)


def _status(code: int, message: str) -> httpx2.Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code}
    return httpx2.Response(
        code, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
