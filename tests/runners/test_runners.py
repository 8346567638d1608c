"""The runners on either clock: CA's loop every scan interval and its deletions passes when due (as
upstream's deletion goroutine wakes between loops), restarts that forget the wake-ups, the HPA's and
Escalator's loops, and each result handed to the reporter."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubetide.clock import RealTimeClock, VirtualClock
from kubetide.cluster.loop.result import LoopResult
from kubetide.kube.failures import LoopFailed
from kubetide.runners import ClusterAutoscalerRunner, EscalatorRunner, HPARunner
from kubetide.testing.clock import FakeTime


@dataclass
class FakeDriver:
    """Each loop and deletions pass says the next deletion step is due at ``due[now]``, if listed."""

    due: dict[float, float] = field(default_factory=dict)
    calls: list[tuple[str, float]] = field(default_factory=list)
    carried: list[bool] = field(default_factory=list)

    def tick(self, now: float) -> LoopResult:
        self.calls.append(("loop", now))
        return LoopResult(deletions_due_at=self.due.get(now))

    def deletions(self, now: float, *, carry: bool = True) -> LoopResult:
        self.calls.append(("deletions", now))
        self.carried.append(carry)
        return LoopResult(deletions_due_at=self.due.get(now), deleted_between_loops={"underutilized": 1})

    def restart(self, now: float) -> None:
        self.calls.append(("restart", now))


@dataclass
class Reporter:
    seen: list[tuple[str, float]] = field(default_factory=list)
    fail_loops: bool = False

    def loop_started(self, now: float) -> None:
        self.seen.append(("started", now))

    def loop_finished(self, result: object, now: float) -> None:
        self.seen.append(("finished", now))
        if self.fail_loops:
            raise LoopFailed("failed to refresh cloud provider")

    def deletions_finished(self, result: LoopResult, now: float) -> None:
        self.seen.append(("deletions", now))


def test_a_deletion_step_due_between_loops_runs_then_alone_and_the_loops_keep_their_times() -> None:
    clock = VirtualClock()
    # The loop at 0 taints a node: its drain is due at 3 (the delay after the taint), which then
    # waits for the evicted pods until 7; nothing is left by then.
    driver = FakeDriver(due={0.0: 3.0, 3.0: 7.0})
    reporter = Reporter()
    runner = ClusterAutoscalerRunner(driver, clock, 10.0, reporter)
    runner.start()
    clock.run(25.0)
    assert driver.calls == [
        ("loop", 0.0),
        ("deletions", 3.0),
        ("deletions", 7.0),
        ("loop", 10.0),
        ("loop", 20.0),
    ]
    assert driver.carried == [True, True]  # the simulator counts them in the next loop's stats
    assert reporter.seen[:5] == [
        ("started", 0.0),
        ("finished", 0.0),
        ("deletions", 3.0),
        ("deletions", 7.0),
        ("started", 10.0),
    ]


def test_one_wake_up_per_due_time_and_none_for_a_time_already_reached() -> None:
    clock = VirtualClock()
    driver = FakeDriver(due={0.0: 5.0, 1.0: 5.0, 2.0: 2.0})
    runner = ClusterAutoscalerRunner(driver, clock, 1.0)
    runner.start()
    clock.run(5.5)
    assert [c for c in driver.calls if c[0] == "deletions"] == [("deletions", 5.0)]


def test_a_restart_forgets_the_wake_ups_and_stop_cancels_everything() -> None:
    clock = VirtualClock()
    driver = FakeDriver(due={0.0: 4.0})
    runner = ClusterAutoscalerRunner(driver, clock, 10.0)
    runner.start()
    clock.run(1.0)
    runner.restart()
    clock.run(12.0)
    assert driver.calls == [("loop", 0.0), ("restart", 1.0), ("loop", 10.0)]
    driver.due = {20.0: 25.0}
    clock.run(21.0)
    runner.stop()
    clock.run(100.0)
    assert driver.calls[-1] == ("loop", 20.0)


def test_live_the_deletions_pass_runs_on_the_clock_at_its_time_even_when_the_loop_failed() -> None:
    t = FakeTime()
    errors: list[str] = []
    clock = RealTimeClock(time=t.time, waiter=t, on_error=lambda exc, name: errors.append(f"{name}: {exc}"))
    driver = FakeDriver(due={1000.0: 1002.5})
    reporter = Reporter(fail_loops=True)
    runner = ClusterAutoscalerRunner(driver, clock, 10.0, reporter, carry_deletions=False)
    runner.start()
    clock.at(1015.0, lambda now: clock.stop())
    clock.run()
    assert driver.calls == [("loop", 1000.0), ("deletions", 1002.5), ("loop", 1010.0)]
    assert driver.carried == [False]  # live metrics count them at once
    assert errors == ["ca-loop: failed to refresh cloud provider"] * 2


@dataclass
class TickingDriver:
    results: list[float] = field(default_factory=list)
    restarts: int = 0

    def tick(self, now: float) -> tuple[()]:
        self.results.append(now)
        return ()

    def restart(self) -> None:
        self.restarts += 1


@pytest.mark.parametrize("kind", ["hpa", "escalator"])
def test_the_hpa_and_escalator_loops_tick_every_period_from_their_phase(kind: str) -> None:
    clock = VirtualClock()
    driver = TickingDriver()
    reporter = Reporter()
    runner: HPARunner | EscalatorRunner
    if kind == "hpa":
        runner = HPARunner(driver, clock, 15.0, reporter)
    else:
        runner = EscalatorRunner(driver, clock, 15.0, reporter)  # type: ignore[arg-type]
    runner.start(phase=2.0)
    clock.run(40.0)
    runner.restart()
    assert driver.results == [2.0, 17.0, 32.0] and driver.restarts == 1
    assert reporter.seen == [(e, t) for t in (2.0, 17.0, 32.0) for e in ("started", "finished")]


def test_loops_due_together_run_hpa_then_cluster_autoscaler_then_escalator() -> None:
    clock = VirtualClock()
    order: list[str] = []

    class Named(TickingDriver):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

        def tick(self, now: float) -> tuple[()]:
            order.append(self.name)
            return ()

    class CA(FakeDriver):
        def tick(self, now: float) -> LoopResult:
            order.append("ca")
            return LoopResult()

    EscalatorRunner(Named("escalator"), clock, 10.0).start()  # type: ignore[arg-type]
    ClusterAutoscalerRunner(CA(), clock, 10.0).start()
    HPARunner(Named("hpa"), clock, 10.0).start()
    clock.run(0.0)
    assert order == ["hpa", "ca", "escalator"]
