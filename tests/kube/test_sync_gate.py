"""Loops decide only on synced caches: after a watch failure a loop is skipped (counted, logged once)
until every cache it reads has listed again; and failures are logged as one line naming the cause."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

import pytest
from prometheus_client import REGISTRY

from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import LeaderElection, LiveSettings
from kubetide.kube.failures import describe
from kubetide.kube.loop import LoopFailed, run_every
from kubetide.kube.rest import KubeStatusError
from kubetide.kube.sync_gate import CACHE_NOT_SYNCED, SyncGate
from kubetide.testing.apiserver import FakeApi


def skipped(component: str) -> float:
    value = REGISTRY.get_sample_value(
        "kubetide_loops_skipped_total", {"component": component, "reason": CACHE_NOT_SYNCED}
    )
    return value or 0.0


def test_the_gate_skips_while_a_cache_is_unsynced_and_logs_the_outage_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    gate = SyncGate("gate-test", clock=lambda: now[0])
    before = skipped("gate-test")
    with caplog.at_level(logging.INFO, logger="kubetide.run"):
        assert gate.allows([])
        for _ in range(3):
            now[0] += 10
            assert not gate.allows(["nodes", "poddisruptionbudgets"])
        now[0] += 10
        assert gate.allows([])
        assert gate.allows([])
    assert skipped("gate-test") == before + 3
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "gate-test: loops skipped until these caches have listed again after a watch failure: "
        "nodes, poddisruptionbudgets",
        "gate-test: caches synced again; 3 loops skipped over 30.0s",
    ]


@dataclass
class Component:
    """A component whose caches are unsynced for the ticks listed in ``stale``."""

    stale: set[int]
    period: float = 1.0
    asked: int = 0
    ticks: list[float] = field(default_factory=list)

    def start(self, stop: threading.Event) -> bool:
        return True

    def tick(self, now: float) -> None:
        self.ticks.append(now)

    def report(self) -> str:
        return ""

    def unsynced(self) -> list[str]:
        self.asked += 1
        return ["pods"] if self.asked in self.stale else []

    def stop(self) -> None:
        pass


def test_the_runtime_runs_no_tick_on_unsynced_caches() -> None:
    settings = LiveSettings(
        "runtime-test", None, False, False, "text", 0, "127.0.0.1:0", LeaderElection(False, "", "", 1, 1, 1)
    )
    runtime = Runtime(settings, FakeApi().rest(), HealthLimits())
    runtime.leading.set()
    component = Component(stale={2, 3})
    tick = runtime._guarded(component)
    for now in (1.0, 2.0, 3.0, 4.0):
        tick(now)
    assert component.ticks == [1.0, 4.0]
    assert skipped("runtime-test") == 2


def test_a_failed_iteration_is_one_line_naming_the_cause(caplog: pytest.LogCaptureFixture) -> None:
    stop = threading.Event()
    errors = iter([LoopFailed("failed to refresh cloud provider: kwok refresh: 0: ConnectError"), None])

    def tick(now: float) -> None:
        error = next(errors)
        if error is None:
            stop.set()
            return
        raise error

    with caplog.at_level(logging.INFO, logger="kubetide.kube.loop"):
        run_every(0.001, tick, stop)
    (record,) = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is None
    assert record.getMessage() == (
        "main loop: iteration failed (next one at the next period): "
        "failed to refresh cloud provider: kwok refresh: 0: ConnectError"
    )


def test_the_traceback_is_logged_at_debug_level(caplog: pytest.LogCaptureFixture) -> None:
    stop = threading.Event()

    def tick(now: float) -> None:
        stop.set()
        raise KeyError("x")

    with caplog.at_level(logging.DEBUG, logger="kubetide.kube.loop"):
        run_every(0.001, tick, stop)
    (record,) = caplog.records
    assert record.exc_info is not None
    assert record.getMessage().endswith(": KeyError: 'x'")


def test_describe_names_the_cause_on_one_line() -> None:
    assert describe(KubeStatusError(503, "ServiceUnavailable", "the server\nis restarting")) == (
        "503 ServiceUnavailable: the server is restarting"
    )
    assert describe(ConnectionRefusedError(111, "Connection refused")) == (
        "ConnectionRefusedError: [Errno 111] Connection refused"
    )
    assert describe(TimeoutError()) == "TimeoutError"
