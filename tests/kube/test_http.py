"""The health check's verdicts and the status server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2
import pytest

from kubetide.kube.http import HealthTracker, StatusServer, parse_address
from kubetide.kube.metrics import API_ERRORS


def test_health_is_ok_on_standby_and_before_the_first_loop_then_judges_the_loops() -> None:
    h = HealthTracker(max_inactivity_s=600, max_failing_s=900, max_startup_s=1200)
    assert h.check(1e9) == (True, "OK")  # standby
    h.start_monitoring(0)
    assert h.check(1199)[0]
    assert not h.check(1201)[0]  # the first loop never came
    h.start_monitoring(0)
    h.loop_started(100)
    h.loop_succeeded(100)
    assert h.check(700)[0]
    assert not h.check(701)[0]  # no loop started for more than 600 s
    h.loop_started(700)
    assert h.check(1000)[0]
    assert not h.check(1001)[0]  # loops run but the last success was more than 900 s ago
    h.stop_monitoring()
    assert h.check(1e9)[0]


def test_parse_address() -> None:
    assert parse_address(":8085") == ("", 8085)
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    with pytest.raises(ValueError):
        parse_address("8085")


def test_server_answers_metrics_and_health() -> None:
    health = HealthTracker(max_startup_s=10)
    health.start_monitoring(0)
    server = StatusServer("127.0.0.1:0", health, clock=lambda: 100.0).start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        API_ERRORS.labels(resource="nodes", reason="test").inc()
        metrics = httpx2.get(f"{base}/metrics")
        assert metrics.status_code == 200 and "kubetide_api_errors_total" in metrics.text
        # No *_created series: Go's client (CA, Escalator, kube-controller-manager) has none.
        assert "_created" not in metrics.text
        check = httpx2.get(f"{base}/health-check")
        assert check.status_code == 500 and "startup" in check.text
        assert httpx2.get(f"{base}/nope").status_code == 404
    finally:
        server.stop()


def test_server_answers_a_components_json_pages_with_their_query() -> None:
    def page(query: Mapping[str, str]) -> tuple[int, Any]:
        if query.get("boom"):
            raise RuntimeError("a bug in the page")
        return (200, {"asked": dict(query)}) if query.get("hpa") != "none" else (404, {"error": "no"})

    server = StatusServer("127.0.0.1:0", HealthTracker(), pages={"/debug/hpa": page}).start()
    try:
        base = f"http://127.0.0.1:{server.port}/debug/hpa"
        answer = httpx2.get(base, params={"hpa": "shop/web"})
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
        assert answer.json() == {"asked": {"hpa": "shop/web"}}
        assert httpx2.get(base, params={"hpa": "none"}).status_code == 404
        broken = httpx2.get(base, params={"boom": "1"})
        assert broken.status_code == 500 and broken.json() == {"error": "RuntimeError: a bug in the page"}
        assert httpx2.get(f"{base}/more").status_code == 404
    finally:
        server.stop()
