"""The event engine: ordering, periodic processes, cancellation, idle time costing nothing."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetide.clock import SchedulingError, VirtualClock
from kubetide.sim.rng import RngFactory, deterministic_phase


def test_events_run_in_time_order_with_now_passed_in() -> None:
    engine, seen = VirtualClock(), []
    for t in (30, 10, 20):
        engine.at(t, lambda now, t=t: seen.append((now, engine.now, t)))
    engine.run(100)
    assert seen == [(10, 10, 10), (20, 20, 20), (30, 30, 30)]
    assert engine.now == 100


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(-3, 3)), max_size=60))
def test_equal_times_order_by_priority_then_scheduling_order(specs: list[tuple[int, int]]) -> None:
    engine, seen = VirtualClock(), []
    for i, (t, priority) in enumerate(specs):
        engine.at(t, lambda now, i=i: seen.append(i), priority=priority)
    engine.run(100)
    expected = sorted(range(len(specs)), key=lambda i: (specs[i][0], specs[i][1], i))
    assert seen == expected


@given(st.lists(st.floats(0, 1000, allow_nan=False), max_size=40), st.floats(0, 1000))
def test_run_until_processes_exactly_the_due_events(times: list[float], until: float) -> None:
    engine, seen = VirtualClock(), []
    for t in times:
        engine.at(t, seen.append)
    engine.run(until)
    assert seen == sorted(t for t in times if t <= until)
    assert engine.peek() == min((t for t in times if t > until), default=math.inf)


def test_callbacks_can_schedule_more_work_including_now() -> None:
    engine, seen = VirtualClock(), []

    def first(now: float) -> None:
        seen.append("first")
        engine.after(0, lambda _: seen.append("same instant"))
        engine.after(5, lambda _: seen.append("later"))

    engine.at(1, first)
    engine.at(1, lambda _: seen.append("second"))
    engine.run(10)
    assert seen == ["first", "second", "same instant", "later"]


def test_periodic_process_with_phase_and_no_drift() -> None:
    engine, times = VirtualClock(), []
    engine.every(0.1, times.append, phase=0.05)
    engine.run(8640)
    assert len(times) == 86400
    assert times[-1] == 0.05 + 86399 * 0.1  # multiplied, not accumulated


def test_cancel_an_event_and_a_process() -> None:
    engine, seen = VirtualClock(), []
    event = engine.at(5, lambda _: seen.append("event"))
    process = engine.every(10, lambda now: seen.append(now))
    event.cancel()
    engine.run(25)
    process.cancel()
    engine.run(100)
    assert seen == [0, 10, 20]


def test_a_process_can_cancel_itself() -> None:
    engine, seen = VirtualClock(), []

    def tick(now: float) -> None:
        seen.append(now)
        if now >= 20:
            process.cancel()

    process = engine.every(10, tick)
    engine.run(1000)
    assert seen == [0, 10, 20]


def test_idle_time_costs_nothing() -> None:
    engine = VirtualClock()
    engine.at(10 * 365 * 86400, lambda _: None)
    engine.run(20 * 365 * 86400)
    assert engine.processed == 1


def test_scheduling_errors() -> None:
    engine = VirtualClock(start=100)
    with pytest.raises(SchedulingError):
        engine.at(50, lambda _: None)
    with pytest.raises(SchedulingError):
        engine.after(-1, lambda _: None)
    with pytest.raises(SchedulingError):
        engine.at(math.nan, lambda _: None)
    with pytest.raises(SchedulingError):
        engine.every(0, lambda _: None)
    with pytest.raises(SchedulingError):
        engine.run(10)


def test_rng_streams_are_per_name_and_independent_of_request_order() -> None:
    a = RngFactory(42)
    b = RngFactory(42)
    b.stream("other").random(10)
    assert a.stream("cloud").random() == b.stream("cloud").random()
    assert a.stream("cloud").random() != RngFactory(43).stream("cloud").random()
    assert a.stream("cloud") is a.stream("cloud")
    assert a.fresh("cloud").random() == RngFactory(42).stream("cloud").random()


def test_deterministic_phase_is_within_the_period_and_stable() -> None:
    phases = {deterministic_phase(1, f"hpa/{i}", 15) for i in range(100)}
    assert all(0 <= p < 15 for p in phases) and len(phases) == 100
    assert deterministic_phase(1, "ca", 10) == deterministic_phase(1, "ca", 10)
