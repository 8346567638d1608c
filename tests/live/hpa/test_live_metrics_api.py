"""The metrics port over the aggregated metrics APIs: tested with an in-memory server answering as
metrics-server and a custom/external metrics adapter do (the test API server can't serve them)."""

from __future__ import annotations

import pytest

from kubetide.hpa.ports import NEVER, MetricsError, PodMetric
from kubetide.live.hpa.metrics_api import ApiMetricsSource
from kubetide.model.fields import parse_time
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.selectors import parse_selector_string
from kubetide.testing.hpa_server import FakeServer, status

SEL = parse_selector_string("app=web")
TS = "2026-11-23T20:00:00Z"
PODS = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop"


def pod_metrics(
    name: str, containers: list[tuple[str, dict[str, str]]], window: str = "30s"
) -> dict[str, object]:
    return {
        "metadata": {"name": name, "namespace": "shop"},
        "timestamp": TS,
        "window": window,
        "containers": [{"name": c, "usage": usage} for c, usage in containers],
    }


def test_resource_metrics_sum_containers_in_milli_units_with_time_and_window() -> None:
    server = FakeServer().on(
        "GET",
        PODS,
        {
            "items": [
                pod_metrics(
                    "a", [("app", {"cpu": "250m", "memory": "1Ki"}), ("side", {"cpu": "1", "memory": "1"})]
                ),
                pod_metrics("b", [("app", {"cpu": "12345678n", "memory": "2Mi"})], window="1m0s"),
                pod_metrics("no-containers", []),
                pod_metrics("no-cpu", [("app", {"memory": "1"})]),
            ]
        },
    )
    source = ApiMetricsSource(server.api())
    cpu = source.resource_metrics("shop", SEL, "cpu", "")
    assert dict(cpu) == {
        "a": PodMetric(1250, parse_time(TS), 30.0),
        "b": PodMetric(13, parse_time(TS), 60.0),  # MilliValue rounds up
    }
    assert server.params() == {"labelSelector": "app=web"}
    memory = source.resource_metrics("shop", SEL, "memory", "")
    assert memory["a"].value == 1024 * 1000 + 1000  # milli-bytes, as upstream's MilliValue()
    assert "no-cpu" in memory


def test_container_resource_takes_one_container_and_skips_pods_without_it() -> None:
    server = FakeServer().on(
        "GET",
        PODS,
        {
            "items": [
                pod_metrics("a", [("app", {"cpu": "100m"}), ("side", {"cpu": "5m"})]),
                pod_metrics("b", [("other", {"cpu": "1"})]),
            ]
        },
    )
    assert dict(ApiMetricsSource(server.api()).resource_metrics("shop", SEL, "cpu", "side")) == {
        "a": PodMetric(5, parse_time(TS), 30.0)
    }


def test_resource_metrics_errors_carry_upstream_messages() -> None:
    server = FakeServer().on("GET", PODS, {"items": []})
    with pytest.raises(MetricsError, match=r"^no metrics returned from resource metrics API$"):
        ApiMetricsSource(server.api()).resource_metrics("shop", SEL, "cpu", "")
    server.on(
        "GET",
        PODS,
        status(503, "the server is currently unable to handle the request (get pods.metrics.k8s.io)"),
    )
    with pytest.raises(MetricsError) as err:
        ApiMetricsSource(server.api()).resource_metrics("shop", SEL, "cpu", "")
    assert str(err.value) == (
        "unable to fetch metrics from resource metrics API: "
        "the server is currently unable to handle the request (get pods.metrics.k8s.io)"
    )
    server.on("GET", PODS, (503, "service unavailable"))  # not a Status: client-go's text for the code
    with pytest.raises(
        MetricsError, match="unable to fetch metrics from resource metrics API: the server is currently"
    ):
        ApiMetricsSource(server.api()).resource_metrics("shop", SEL, "cpu", "")


def test_pod_custom_metrics_with_selectors_and_default_window() -> None:
    def item(pod: str, value: str, window: int | None) -> dict[str, object]:
        out: dict[str, object] = {
            "describedObject": {"kind": "Pod", "namespace": "shop", "name": pod, "apiVersion": "/v1"},
            "metricName": "requests",
            "timestamp": TS,
            "value": value,
        }
        if window is not None:
            out["windowSeconds"] = window
        return out

    server = FakeServer().on(
        "GET", f"{CUSTOM}/pods/*/requests", {"items": [item("a", "1500m", 30), item("b", "2", None)]}
    )
    samples = ApiMetricsSource(server.api()).pod_metrics(
        "shop", "requests", SEL, parse_selector_string("verb=GET")
    )
    assert dict(samples) == {
        "a": PodMetric(1500, parse_time(TS), 30.0),
        "b": PodMetric(2000, parse_time(TS), 60.0),
    }
    assert server.params() == {"labelSelector": "app=web", "metricLabelSelector": "verb=GET"}
    server.on("GET", f"{CUSTOM}/pods/*/requests", {"items": []})
    with pytest.raises(MetricsError, match=r"^no metrics returned from custom metrics API$"):
        ApiMetricsSource(server.api()).pod_metrics("shop", "requests", SEL, None)


def test_object_metric_paths_follow_the_rest_mapping() -> None:
    value = {"items": [{"describedObject": {}, "metricName": "hits", "timestamp": TS, "value": "42"}]}
    server = (
        FakeServer()
        .on("GET", f"{CUSTOM}/deployments.apps/web/hits", value)
        .on("GET", f"{CUSTOM}/services/front/hits", value)
        .on("GET", f"{CUSTOM}/ingresses.networking.k8s.io/main/hits", value)
        .on("GET", f"{CUSTOM}/metrics/hits", value)
        .on("GET", f"{CUSTOM}/widgets.example.com/w/hits", value)
    )
    source = ApiMetricsSource(server.api())
    ref = CrossVersionObjectReference
    assert source.object_metric("shop", "hits", ref("Deployment", "web", "apps/v1"), None) == 42000
    assert source.object_metric("shop", "hits", ref("Service", "front", "v1"), None) == 42000
    assert source.object_metric("shop", "hits", ref("Ingress", "main", "networking.k8s.io/v1"), None) == 42000
    assert source.object_metric("shop", "hits", ref("Namespace", "elsewhere", "v1"), None) == 42000
    # A kind not listed: apimachinery's guessed plural in its group.
    assert (
        source.object_metric(
            "shop", "hits", ref("Widget", "w", "example.com/v1"), parse_selector_string("a=b")
        )
        == 42000
    )
    assert server.params() == {"metricLabelSelector": "a=b"}


def test_object_metric_needs_exactly_one_value() -> None:
    server = FakeServer().on("GET", f"{CUSTOM}/services/front/hits", {"items": []})
    with pytest.raises(MetricsError) as err:
        ApiMetricsSource(server.api()).object_metric(
            "shop", "hits", CrossVersionObjectReference("Service", "front", "v1"), None
        )
    assert "returned 0 results when we asked for exactly one" in str(err.value)
    assert str(err.value).startswith("unable to fetch metrics from custom metrics API: ")
    server.routes.clear()
    with pytest.raises(
        MetricsError, match="unable to fetch metrics from custom metrics API: the server could not find"
    ):
        ApiMetricsSource(server.api()).object_metric(
            "shop", "hits", CrossVersionObjectReference("Service", "front", "v1"), None
        )


def test_external_metrics_values_and_selector() -> None:
    path = "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_depth"
    server = FakeServer().on(
        "GET",
        path,
        {
            "items": [
                {"metricName": "queue_depth", "metricLabels": {}, "timestamp": TS, "value": v}
                for v in ("3", "250m")
            ]
        },
    )
    source = ApiMetricsSource(server.api())
    assert list(source.external_metric("shop", "queue_depth", parse_selector_string("queue=jobs"))) == [
        3000,
        250,
    ]
    assert server.params() == {"labelSelector": "queue=jobs"}
    server.on("GET", path, {"items": []})
    with pytest.raises(MetricsError, match=r"^no metrics returned from external metrics API$"):
        source.external_metric("shop", "queue_depth", None)


def test_malformed_answers_are_metrics_errors() -> None:
    server = FakeServer().on("GET", PODS, {"items": [pod_metrics("a", [("app", {"cpu": "lots"})])]})
    with pytest.raises(MetricsError, match="unable to fetch metrics from resource metrics API: malformed"):
        ApiMetricsSource(server.api()).resource_metrics("shop", SEL, "cpu", "")
    server.on("GET", PODS, {"kind": "Status"})
    with pytest.raises(MetricsError, match="no items"):
        ApiMetricsSource(server.api()).resource_metrics("shop", SEL, "cpu", "")
    no_time = pod_metrics("a", [("app", {"cpu": "1"})])
    del no_time["timestamp"]
    server.on("GET", PODS, {"items": [no_time]})
    assert ApiMetricsSource(server.api()).resource_metrics("shop", SEL, "cpu", "")["a"].timestamp == NEVER
