"""Usage from the annotation: split by requests, CPU integrated into counters, the kubelet's text format."""

from __future__ import annotations

import json
import urllib.request

import pytest

from kubetide.live.agent.server import MetricsServer, parse_address
from kubetide.live.agent.usage import UsageLedger, container_usage


def pod(usage: dict[str, str] | None, *containers: tuple[str, str, str], node: str = "n1") -> dict:
    return {
        "metadata": {
            "name": "web-1",
            "namespace": "shop",
            "uid": "u1",
            "annotations": {"kubetide.io/usage": json.dumps(usage)} if usage is not None else {},
        },
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": name, "resources": {"requests": {"cpu": cpu, "memory": memory}}}
                for name, cpu, memory in containers
            ],
        },
    }


def samples(text: str, name: str) -> dict[str, float]:
    result = {}
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            series, value, _stamp = line.rsplit(" ", 2)
            result[series[len(name) :]] = float(value)
    return result


def test_usage_is_split_across_containers_by_their_requests() -> None:
    usage = container_usage(
        pod({"cpu": "400m", "memory": "300Mi"}, ("app", "300m", "200Mi"), ("sidecar", "100m", "100Mi"))
    )
    assert [(c, pytest.approx(cpu), pytest.approx(mem)) for c, cpu, mem in usage.containers] == [
        ("app", 0.3, 200 * 2**20),
        ("sidecar", 0.1, 100 * 2**20),
    ]


def test_no_requests_split_equally_and_no_annotation_is_zero() -> None:
    assert [
        c[1] for c in container_usage(pod({"cpu": "1"}, ("a", "0", "0"), ("b", "0", "0"))).containers
    ] == [
        0.5,
        0.5,
    ]
    assert container_usage(pod(None, ("a", "1", "1Gi"))).containers == (("a", 0.0, 0.0),)
    assert container_usage(pod({"cpu": "lots"}, ("a", "1", "1Gi"))).containers == (("a", 0.0, 0.0),)


def test_the_cpu_counter_integrates_the_current_rate_after_a_change() -> None:
    ledger = UsageLedger()
    low = container_usage(pod({"cpu": "200m"}, ("app", "1", "1Gi")))
    high = container_usage(pod({"cpu": "1"}, ("app", "1", "1Gi")))
    for t in range(0, 61):
        ledger.update(1000.0 + t, [low], ["n1"])
    before = samples(ledger.render(), "container_cpu_usage_seconds_total")
    assert before['{container="app",namespace="shop",pod="web-1"}'] == pytest.approx(12.0)
    for t in range(61, 121):
        ledger.update(1000.0 + t, [high], ["n1"])
    after = samples(ledger.render(), "container_cpu_usage_seconds_total")
    # rate over the last 59 s is exactly the new value: 1 core
    assert after['{container="app",namespace="shop",pod="web-1"}'] == pytest.approx(12.0 + 1 * 0.2 + 59.0)
    node = samples(ledger.render(), "node_cpu_usage_seconds_total")
    assert node['{node="n1"}'] == pytest.approx(12.0 + 0.2 + 59.0)


def test_the_node_counter_keeps_what_finished_pods_used() -> None:
    ledger = UsageLedger()
    busy = container_usage(pod({"cpu": "1"}, ("app", "1", "1Gi")))
    ledger.update(0.0, [busy], ["n1"])
    ledger.update(10.0, [busy], ["n1"])
    ledger.update(20.0, [], ["n1"])
    text = ledger.render()
    assert samples(text, "node_cpu_usage_seconds_total") == {'{node="n1"}': pytest.approx(20.0)}
    assert samples(text, "container_cpu_usage_seconds_total") == {}


def test_the_text_has_the_kubelets_names_types_and_millisecond_timestamps() -> None:
    ledger = UsageLedger()
    ledger.update(1700000000.5, [container_usage(pod({"memory": "1Ki"}, ("app", "1", "1Gi")))], ["n1"])
    text = ledger.render()
    for name, kind in [
        ("container_cpu_usage_seconds_total", "counter"),
        ("container_memory_working_set_bytes", "gauge"),
        ("pod_cpu_usage_seconds_total", "counter"),
        ("pod_memory_working_set_bytes", "gauge"),
        ("node_cpu_usage_seconds_total", "counter"),
        ("node_memory_working_set_bytes", "gauge"),
    ]:
        assert f"# TYPE {name} {kind}" in text
    assert (
        'container_memory_working_set_bytes{container="app",namespace="shop",pod="web-1"} 1024.0 1700000000500'
        in text
    )
    assert 'pod_memory_working_set_bytes{namespace="shop",pod="web-1"} 1024.0 1700000000500' in text
    assert "_created" not in text  # the kubelet's endpoint has no *_created series


def test_the_server_answers_metrics_and_healthz() -> None:
    server = MetricsServer(("127.0.0.1", 0), lambda: "scrape_error 0\n")
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        with urllib.request.urlopen(base + "/metrics/resource") as response:
            assert response.status == 200 and response.read() == b"scrape_error 0\n"
            assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        with urllib.request.urlopen(base + "/healthz") as response:
            assert response.status == 200
    finally:
        server.stop()


def test_addresses_are_host_port() -> None:
    assert parse_address("127.0.0.1:10255") == ("127.0.0.1", 10255)
    assert parse_address(":8080") == ("0.0.0.0", 8080)
    with pytest.raises(ValueError):
        parse_address("localhost")
