"""The real-time clock: the heap on the wall clock, periodic loops that skip what they overran, errors
that stop nothing, wake-ups from other threads, stop."""

from __future__ import annotations

import threading
import time

import pytest

from kubetide.clock import RealTimeClock
from kubetide.testing.clock import FakeTime


def clock_on(t: FakeTime, errors: list[tuple[str, str]] | None = None) -> RealTimeClock:
    def on_error(exc: BaseException, name: str) -> None:
        assert errors is not None, f"unexpected error in {name}: {exc}"
        errors.append((name, str(exc)))

    return RealTimeClock(time=t.time, waiter=t, on_error=on_error)


def test_a_loop_ticks_at_fixed_multiples_skips_what_it_overran_and_survives_errors() -> None:
    t = FakeTime()
    errors: list[tuple[str, str]] = []
    clock = clock_on(t, errors)
    ticks: list[float] = []

    def tick(now: float) -> None:
        ticks.append(now)
        t.now += 3.0 if len(ticks) != 2 else 25.0  # the second tick overruns two periods
        if len(ticks) == 3:
            raise RuntimeError("one bad iteration")
        if len(ticks) == 5:
            clock.stop()

    clock.every(10.0, tick, name="main")
    clock.run()
    assert ticks == [1000.0, 1010.0, 1040.0, 1050.0, 1060.0]
    assert errors == [("main", "one bad iteration")]


def test_a_one_off_callback_runs_at_its_time_and_one_in_the_past_as_soon_as_possible() -> None:
    t = FakeTime()
    clock = clock_on(t)
    seen: list[tuple[str, float]] = []

    def first(now: float) -> None:
        seen.append(("first", now))
        t.now += 7.0  # it took 7 s: a time it computed from its now has passed
        clock.at(now + 5.0, lambda later: seen.append(("past", later)))
        clock.at(now + 20.0, lambda later: seen.append(("later", later)))

    clock.at(1002.0, first)
    clock.at(1030.0, lambda now: clock.stop())
    clock.run()
    assert seen == [("first", 1002.0), ("past", 1009.0), ("later", 1022.0)]


def test_a_callback_late_because_another_ran_fires_once_then_keeps_its_schedule() -> None:
    t = FakeTime()
    clock = clock_on(t)
    ticks: list[float] = []

    def long_one(now: float) -> None:
        t.now += 25.0  # runs over the loop's ticks at 1010 and 1020

    def tick(now: float) -> None:
        ticks.append(now)
        if len(ticks) == 3:
            clock.stop()

    clock.every(10.0, tick, phase=10.0)
    clock.at(1005.0, long_one)
    clock.run()
    assert ticks == [1030.0, 1040.0, 1050.0]


def test_call_soon_from_another_thread_runs_at_once_and_the_schedule_resumes() -> None:
    t = FakeTime()
    clock = clock_on(t)
    ticks: list[float] = []

    def tick(now: float) -> None:
        ticks.append(now)
        if len(ticks) == 4:
            clock.stop()

    def lease_acquired(timeout: float | None) -> None:
        if len(ticks) == 1 and not clock._soon:  # the first wait: cut short after 4 s
            t.now += 4.0
            clock.call_soon(tick, "main")

    t.on_wait = lease_acquired
    clock.every(10.0, tick)
    clock.run()
    assert ticks == [1000.0, 1004.0, 1010.0, 1020.0]


def test_cancel_drops_a_callback_and_a_loop() -> None:
    t = FakeTime()
    clock = clock_on(t)
    seen: list[float] = []
    event = clock.at(1005.0, seen.append)
    loop = clock.every(10.0, seen.append)
    clock.cancel(event)
    clock.at(1025.0, lambda now: clock.cancel(loop))
    clock.at(1100.0, lambda now: clock.stop())
    clock.run()
    assert seen == [1000.0, 1010.0, 1020.0]


def test_stop_from_another_thread_ends_a_wait_on_the_real_clock() -> None:
    clock = RealTimeClock()
    clock.every(3600.0, lambda now: None, phase=3600.0)  # nothing due for an hour
    runner = threading.Thread(target=clock.run)
    started = time.monotonic()
    runner.start()
    clock.call_soon(lambda now: None)
    clock.stop()
    runner.join(10.0)
    assert not runner.is_alive() and time.monotonic() - started < 10.0


def test_an_error_handler_by_default_logs_the_failure(caplog: pytest.LogCaptureFixture) -> None:
    t = FakeTime()
    clock = RealTimeClock(time=t.time, waiter=t)

    def broken(now: float) -> None:
        clock.stop()
        raise KeyError("x")

    clock.at(1001.0, broken, name="broken")
    clock.run()
    (record,) = caplog.records
    assert record.getMessage() == "broken failed" and record.exc_info is not None
