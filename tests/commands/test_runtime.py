"""The live runtime: the runner on the real-time clock, every loop gated (leading, synced caches), a
failed loop one line and one count, a lease acquired runs a loop at once, a signal stops the clock,
``--once`` runs one loop."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import REGISTRY

from kubetide.clock import Clock
from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import LeaderElection, LiveSettings
from kubetide.kube.failures import LoopFailed
from kubetide.kube.sync_gate import CACHE_NOT_SYNCED
from kubetide.runners import PeriodicRunner
from kubetide.testing.apiserver import FakeApi
from kubetide.testing.clock import FakeTime


class Loop(PeriodicRunner[float]):
    """A runner whose loop records its times and then does what the test says."""

    name = "main"

    def __init__(self, clock: Clock, period: float, on_tick: Callable[[float, int], None]) -> None:
        super().__init__(clock, period)
        self.ticks: list[float] = []
        self.on_tick = on_tick

    def _loop(self, now: float) -> float:
        self.ticks.append(now)
        self.on_tick(now, len(self.ticks))
        return now


class Component:
    """Caches unsynced for the loops listed in ``stale`` (by the gate's question's number)."""

    def __init__(self, on_tick: Callable[[float, int], None], stale: frozenset[int] = frozenset()) -> None:
        self.on_tick = on_tick
        self.stale = stale
        self.asked = 0
        self.loop: Loop | None = None
        self.stopped = False

    def start(self, stop: threading.Event, clock: Clock) -> Loop:
        self.loop = Loop(clock, 10.0, self.on_tick)
        return self.loop

    def report(self) -> str:
        return f"{len(self.loop.ticks) if self.loop else 0} loop(s)"

    def unsynced(self) -> list[str]:
        self.asked += 1
        return ["pods"] if self.asked in self.stale else []

    def stop(self) -> None:
        self.stopped = True

    @property
    def ticks(self) -> list[float]:
        return self.loop.ticks if self.loop else []


def runtime(name: str, t: FakeTime, *, once: bool = False, leader: bool = False) -> Runtime:
    settings = LiveSettings(
        name, None, False, once, "text", 0, "127.0.0.1:0", LeaderElection(leader, "l", "ns", 15, 10, 2)
    )
    return Runtime(settings, FakeApi().rest(), HealthLimits(), wall_clock=t.time, waiter=t)


@pytest.fixture(autouse=True)
def keep_signal_handlers() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


def counted(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_the_loop_runs_at_once_and_every_period_not_twice_at_start() -> None:
    t = FakeTime()
    rt = runtime("runtime-periods", t)

    def on_tick(now: float, n: int) -> None:
        t.now += 1.0
        if n == 3:
            rt.clock.stop()

    component = Component(on_tick)
    assert rt.run(component) == 0
    assert component.ticks == [1000.0, 1010.0, 1020.0]
    assert component.stopped


def test_loops_on_unsynced_caches_are_skipped_and_counted() -> None:
    t = FakeTime()
    rt = runtime("runtime-unsynced", t)
    before = counted(
        "kubetide_loops_skipped_total", {"component": "runtime-unsynced", "reason": CACHE_NOT_SYNCED}
    )
    component = Component(lambda now, n: rt.clock.stop() if n == 2 else None, stale=frozenset({2, 3}))
    rt.run(component)
    assert component.ticks == [1000.0, 1030.0]  # the loops at 1010 and 1020 were skipped
    skipped = counted(
        "kubetide_loops_skipped_total", {"component": "runtime-unsynced", "reason": CACHE_NOT_SYNCED}
    )
    assert skipped == before + 2


@pytest.mark.parametrize(("level", "traceback"), [(logging.INFO, False), (logging.DEBUG, True)])
def test_a_failed_loop_is_one_line_counted_and_the_next_runs_at_its_time(
    caplog: pytest.LogCaptureFixture, level: int, traceback: bool
) -> None:
    t = FakeTime()
    rt = runtime("runtime-errors", t)
    before = counted("kubetide_loop_errors_total", {"loop": "main"})

    def on_tick(now: float, n: int) -> None:
        if n == 1:
            raise LoopFailed("failed to refresh cloud provider: kwok refresh: 0: ConnectError")
        if n == 2:
            raise KeyError("x")
        rt.clock.stop()

    component = Component(on_tick)
    with caplog.at_level(level, logger="kubetide.run"):
        rt.run(component)
    assert component.ticks == [1000.0, 1010.0, 1020.0]
    failures = [r for r in caplog.records if "iteration failed" in r.getMessage()]
    assert [r.getMessage() for r in failures] == [
        "main loop: iteration failed (next one at the next period): "
        "failed to refresh cloud provider: kwok refresh: 0: ConnectError",
        "main loop: iteration failed (next one at the next period): KeyError: 'x'",
    ]
    assert all(r.levelno == logging.ERROR and bool(r.exc_info) is traceback for r in failures)
    assert counted("kubetide_loop_errors_total", {"loop": "main"}) == before + 2


def test_a_lease_acquired_between_loops_runs_a_loop_at_once() -> None:
    t = FakeTime()
    rt = runtime("runtime-lease", t)

    def on_tick(now: float, n: int) -> None:
        if n == 3:
            rt.clock.stop()

    component = Component(on_tick)

    def lease_acquired_after_4s(timeout: float | None) -> None:
        if component.ticks == [1000.0] and t.now == 1000.0:
            t.now += 4.0
            rt._stopped_leading()
            rt._started_leading()  # the elector's thread, having renewed after a loss

    t.on_wait = lease_acquired_after_4s
    rt.run(component)
    assert component.ticks == [1000.0, 1004.0, 1010.0]


def test_no_loop_acts_before_the_lease_is_held() -> None:
    t = FakeTime()
    rt = runtime("runtime-standby", t)
    rt._elect = lambda: None  # type: ignore[method-assign]  # an elector that never wins
    component = Component(lambda now, n: None)
    t.on_wait = lambda timeout: rt.clock.stop() if t.now >= 1030.0 else None
    rt.run(component)
    assert component.ticks == []


def test_a_signal_stops_the_clock_and_refuses_the_rest_of_the_loop() -> None:
    t = FakeTime()
    rt = runtime("runtime-signal", t)
    may_act: list[bool] = []

    def on_tick(now: float, n: int) -> None:
        rt._on_signal(signal.SIGTERM, None)
        may_act.append(rt.may_act())

    component = Component(on_tick)
    assert rt.run(component) == 0
    assert component.ticks == [1000.0] and may_act == [False] and component.stopped


def test_once_runs_one_loop_and_prints_its_report(capsys: pytest.CaptureFixture[str]) -> None:
    t = FakeTime()
    rt = runtime("runtime-once", t, once=True)
    component = Component(lambda now, n: None)
    assert rt.run(component) == 0
    assert component.ticks == [1000.0]
    assert capsys.readouterr().out == "1 loop(s)\n"
