"""Metrics straight from Prometheus: the default CPU/memory queries, adapter rules for custom and
external metrics, retries with backoff, and the rules file's field-path errors."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import httpx2
import pytest

from kubetide.hpa.ports import MetricsError, PodMetric
from kubetide.live.hpa.prometheus.client import PrometheusClient
from kubetide.live.hpa.prometheus.rules import RulesError, parse_rules
from kubetide.live.hpa.prometheus.source import PrometheusMetricsSource
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector, parse_selector_string
from kubetide.testing.hpa_server import FakeServer

SEL = parse_selector_string("app=web")
TS = 1795464000.5


def vector(*samples: tuple[dict[str, str], str]) -> dict[str, Any]:
    return {
        "status": "success",
        "data": {"resultType": "vector", "result": [{"metric": m, "value": [TS, v]} for m, v in samples]},
    }


def form(request: httpx2.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


def pods(*names: str) -> Any:
    views = tuple(Pod(name=n, namespace="shop", labels={"app": "web"}) for n in names)
    return lambda namespace, selector: views if namespace == "shop" else ()


def client(server: FakeServer, sleeps: list[float] | None = None) -> PrometheusClient:
    return PrometheusClient(
        "http://prom.test",
        http=server.client("http://prom.test"),
        sleep=(sleeps if sleeps is not None else []).append,
    )


def test_cpu_query_rate_window_milli_cores_and_container_choice() -> None:
    answer = vector(
        ({"pod": "web-1", "container": "app"}, "0.1"),
        ({"pod": "web-1", "container": "side"}, "0.025000001"),
        ({"pod": "web-2", "container": "app"}, "1.5"),
    )
    server = FakeServer().on("POST", "/api/v1/query", answer)
    source = PrometheusMetricsSource(client(server), pods("web-1", "web-2", "web-3"), window_s=120)
    samples = source.resource_metrics("shop", SEL, "cpu", "")
    assert dict(samples) == {"web-1": PodMetric(100 + 26, TS, 120.0), "web-2": PodMetric(1500, TS, 120.0)}
    assert form(server.requests[-1])["query"] == (
        "sum by (pod, container) (rate(container_cpu_usage_seconds_total"
        '{namespace="shop",pod=~"web-1|web-2|web-3",container!="",container!="POD"}[120s]))'
    )
    assert dict(source.resource_metrics("shop", SEL, "cpu", "side")) == {"web-1": PodMetric(26, TS, 120.0)}


def test_a_pod_with_a_container_without_samples_has_no_sample() -> None:
    from kubetide.model.pod import Container

    two = (Pod(name="web-1", namespace="shop", containers=(Container("app"), Container("side"))),)
    server = FakeServer().on("POST", "/api/v1/query", vector(({"pod": "web-1", "container": "app"}, "0.2")))
    source = PrometheusMetricsSource(client(server), lambda ns, s: two)
    assert dict(source.resource_metrics("shop", SEL, "cpu", "")) == {}
    assert source.resource_metrics("shop", SEL, "cpu", "app")["web-1"].value == 200


def test_memory_is_the_working_set_in_milli_bytes() -> None:
    server = FakeServer().on(
        "POST", "/api/v1/query", vector(({"pod": "web-1", "container": "app"}, "1048576"))
    )
    samples = PrometheusMetricsSource(client(server), pods("web-1")).resource_metrics(
        "shop", SEL, "memory", ""
    )
    assert samples["web-1"].value == 1048576000 and samples["web-1"].window == 60.0
    assert "container_memory_working_set_bytes{" in form(server.requests[-1])["query"]


def test_no_pods_or_no_samples_is_no_metrics() -> None:
    server = FakeServer().on("POST", "/api/v1/query", vector())
    with pytest.raises(MetricsError, match=r"^no metrics returned from resource metrics API$"):
        PrometheusMetricsSource(client(server), pods("web-1")).resource_metrics("shop", SEL, "cpu", "")
    with pytest.raises(MetricsError, match=r"^no metrics returned from resource metrics API$"):
        PrometheusMetricsSource(client(server), pods()).resource_metrics("shop", SEL, "cpu", "")


def test_transient_failures_are_retried_with_backoff_then_metrics_error() -> None:
    calls: list[int] = []

    def flaky(request: httpx2.Request) -> tuple[int, Any]:
        calls.append(1)
        if len(calls) < 3:
            return 503, "overloaded"
        return 200, vector(({"pod": "web-1", "container": "app"}, "0.2"))

    sleeps: list[float] = []
    server = FakeServer().on("POST", "/api/v1/query", flaky)
    assert (
        PrometheusMetricsSource(client(server, sleeps), pods("web-1"))
        .resource_metrics("shop", SEL, "cpu", "")["web-1"]
        .value
        == 200
    )
    assert sleeps == [0.5, 1.0]
    sleeps.clear()
    server.on("POST", "/api/v1/query", lambda r: (0, httpx2.ConnectTimeout("timed out")))
    with pytest.raises(
        MetricsError,
        match=r"unable to fetch metrics from resource metrics API: .*failed after 4 attempts: ConnectTimeout",
    ):
        PrometheusMetricsSource(client(server, sleeps), pods("web-1")).resource_metrics(
            "shop", SEL, "cpu", ""
        )
    assert sleeps == [0.5, 1.0, 2.0]
    # A rejected query is not retried.
    sleeps.clear()
    server.on(
        "POST", "/api/v1/query", (400, {"status": "error", "errorType": "bad_data", "error": "parse error"})
    )
    with pytest.raises(MetricsError, match="bad_data: parse error"):
        PrometheusMetricsSource(client(server, sleeps), pods("web-1")).resource_metrics(
            "shop", SEL, "cpu", ""
        )
    assert sleeps == []


RULES = {
    "rules": [
        {
            "seriesQuery": 'http_requests_total{namespace!="",pod!=""}',
            "resources": {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}},
            "name": {"matches": "^(.*)_total$", "as": "${1}_per_second"},
            "metricsQuery": "sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": '{__name__=~"^ingress_hits$",namespace!=""}',
            "resources": {"template": "<<.Resource>>"},
            "metricsQuery": "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        },
    ],
    "externalRules": [
        {
            "seriesQuery": '{__name__="queue_depth"}',
            "resources": {"namespaced": False},
            "metricsQuery": "max(<<.Series>>{<<.LabelMatchers>>})",
        }
    ],
}


def rules_server(query_answer: Any) -> FakeServer:
    series = {
        'http_requests_total{namespace!="",pod!=""}': [
            {"__name__": "http_requests_total", "pod": "web-1", "namespace": "shop"}
        ],
        '{__name__=~"^ingress_hits$",namespace!=""}': [
            {"__name__": "ingress_hits", "ingress": "main", "namespace": "shop"}
        ],
        '{__name__="queue_depth"}': [{"__name__": "queue_depth", "queue": "jobs"}],
    }
    return (
        FakeServer()
        .on(
            "POST",
            "/api/v1/series",
            lambda r: (200, {"status": "success", "data": series[form(r)["match[]"]]}),
        )
        .on("POST", "/api/v1/query", query_answer)
    )


def test_pods_metric_from_an_adapter_rule() -> None:
    server = rules_server(vector(({"pod": "web-1"}, "2.5"), ({"pod": "web-2"}, "0.0015")))
    source = PrometheusMetricsSource(client(server), pods("web-1", "web-2"), parse_rules(RULES))
    samples = source.pod_metrics(
        "shop", "http_requests_per_second", SEL, parse_selector_string("verb in (GET,PUT)")
    )
    assert dict(samples) == {"web-1": PodMetric(2500, TS, 60.0), "web-2": PodMetric(1, TS, 60.0)}
    assert form(server.requests[-1])["query"] == (
        'sum(rate(http_requests_total{namespace="shop",pod=~"web-1|web-2",verb=~"GET|PUT"}[2m])) by (pod)'
    )
    with pytest.raises(MetricsError, match="no rule of the Prometheus rules names a metric nope"):
        source.pod_metrics("shop", "nope", SEL, None)


def test_object_and_external_metrics_from_rules() -> None:
    server = rules_server(vector(({"ingress": "main", "namespace": "shop"}, "42")))
    source = PrometheusMetricsSource(client(server), pods("web-1"), parse_rules(RULES))
    ref = CrossVersionObjectReference("Ingress", "main", "networking.k8s.io/v1")
    assert source.object_metric("shop", "ingress_hits", ref, None) == 42000
    assert (
        form(server.requests[-1])["query"]
        == 'sum(ingress_hits{namespace="shop",ingress="main"}) by (ingress)'
    )
    server.on("POST", "/api/v1/query", vector(({}, "7")))
    assert list(source.external_metric("shop", "queue_depth", parse_selector_string("queue=jobs"))) == [7000]
    assert form(server.requests[-1])["query"] == 'max(queue_depth{queue="jobs"})'
    server.on("POST", "/api/v1/query", vector())
    with pytest.raises(MetricsError, match=r"^no metrics returned from external metrics API$"):
        source.external_metric("shop", "queue_depth", None)
    with pytest.raises(MetricsError, match="returned 0 results when we asked for exactly one"):
        source.object_metric("shop", "ingress_hits", ref, None)


def test_metric_selectors_as_promql_matchers() -> None:
    from kubetide.live.hpa.prometheus.source import label_matchers
    from kubetide.model.selectors import Requirement

    sel = LabelSelector(
        (
            Requirement("a", "In", ("x",)),
            Requirement("b", "NotIn", ("y", "z")),
            Requirement("c", "Exists"),
            Requirement("d", "DoesNotExist"),
        )
    )
    assert label_matchers(sel) == ['a="x"', 'b!~"y|z"', 'c=~".+"', 'd=""']


def test_rules_file_errors_name_every_field_path_at_once() -> None:
    bad = {
        "resourceRules": {"cpu": {}},
        "metricsRelistInterval": "1m",
        "rules": [
            {
                "seriesQuery": "x",
                "metricsQuery": "sum(<<.Series>>) by (<<range .GroupBySlice>><<.>><<end>>)",
                "extra": 1,
            },
            {
                "metricsQuery": 3,
                "name": {"matches": "(a)(b)"},
                "seriesFilters": [{"is": "("}, {"maybe": "x"}],
            },
            {
                "seriesQuery": "x",
                "metricsQuery": "<<.Series>>",
                "resources": {
                    "overrides": {"pod": {"resource": "pod", "kind": "Pod"}},
                    "template": "<<.Kind>>",
                },
            },
        ],
        "externalRules": "nope",
    }
    with pytest.raises(RulesError) as err:
        parse_rules(bad)
    paths = [e.path for e in err.value.errors]
    assert paths == [
        "resourceRules",
        "metricsRelistInterval",
        "rules[0].extra",
        "rules[0].metricsQuery",
        "rules[0].metricsQuery",
        "rules[0].metricsQuery",
        "rules[1].seriesQuery",
        "rules[1].metricsQuery",
        "rules[1].seriesFilters[0].is",
        "rules[1].seriesFilters[1]",
        "rules[1].name.as",
        "rules[2].resources.overrides.pod.kind",
        "rules[2].resources.template",
        "externalRules",
    ]
    assert "unsupported template action <<range .GroupBySlice>>" in str(err.value)
    assert "resourceRules: not supported" in str(err.value)


def test_rule_naming_follows_the_adapter_defaults() -> None:
    config = parse_rules(
        {
            "rules": [
                {
                    "seriesQuery": "a",
                    "metricsQuery": "<<.Series>>",
                    "name": {"matches": "^(.*)_seconds_total$"},
                },
                {"seriesQuery": "b", "metricsQuery": "<<.Series>>", "seriesFilters": [{"isNot": "^go_"}]},
            ]
        }
    )
    first, second = config.rules
    assert first.metric_name("cpu_seconds_total") == "cpu" and first.metric_name("other") is None
    assert second.metric_name("go_gc") is None and second.metric_name("queue") == "queue"
