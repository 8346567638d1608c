"""The health check's verdicts, the status server, and the drift-free periodic runner."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

import httpx2
import pytest

from kubetide.kube.http import HealthTracker, StatusServer, parse_address
from kubetide.kube.loop import run_every
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


class FakeTime(threading.Event):
    """A stop event whose waits advance a fake clock instead of sleeping."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 1000.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None
        self.waits.append(timeout)
        self.now += timeout
        return self.is_set()


def test_ticks_at_fixed_multiples_of_the_period_and_survive_errors() -> None:
    t = FakeTime()
    ticks: list[float] = []

    def tick(now: float) -> None:
        ticks.append(now)
        t.now += 3.0 if len(ticks) != 2 else 25.0  # the second tick overruns two periods
        if len(ticks) == 3:
            raise RuntimeError("one bad iteration")
        if len(ticks) == 5:
            t.set()

    run_every(10.0, tick, t, clock=t.clock)
    assert ticks == [1000.0, 1010.0, 1040.0, 1050.0, 1060.0]


@pytest.mark.parametrize(("level", "traceback"), [(logging.INFO, False), (logging.DEBUG, True)])
def test_a_failed_iteration_is_one_line_and_the_traceback_only_at_debug(
    caplog: pytest.LogCaptureFixture, level: int, traceback: bool
) -> None:
    t = FakeTime()

    def tick(now: float) -> None:
        t.set()
        raise RuntimeError("failed to refresh cloud provider: aws refresh: no usable AWS credentials")

    with caplog.at_level(level, logger="kubetide.kube.loop"):
        run_every(10.0, tick, t, clock=t.clock)
    (record,) = caplog.records
    assert record.getMessage() == (
        "main loop: iteration failed (next one at the next period): RuntimeError: failed to refresh "
        "cloud provider: aws refresh: no usable AWS credentials"
    )
    assert bool(record.exc_info) is traceback


def test_a_wake_runs_a_tick_at_once_and_the_schedule_resumes() -> None:
    stop = threading.Event()
    now = [1000.0]
    ticks: list[float] = []

    class Waker(threading.Event):
        """The wake event: its first wait is cut short after 4 s (a lease acquired), later ones elapse."""

        def wait(self, timeout: float | None = None) -> bool:
            assert timeout is not None
            if len(ticks) == 1:
                now[0] += 4.0
                self.set()
                return True
            now[0] += timeout
            if len(ticks) >= 4:
                stop.set()
                self.set()
            return self.is_set()

    waker = Waker()

    def tick(t: float) -> None:
        ticks.append(t)

    run_every(10.0, tick, stop, clock=lambda: now[0], wake=waker)
    assert ticks == [1000.0, 1004.0, 1010.0, 1020.0]
