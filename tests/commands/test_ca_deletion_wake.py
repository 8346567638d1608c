"""Live CA: deletions due between loops (--node-delete-delay-after-taint) run when due, on the loop
thread, as the woken tick's only work; not at the next scan, and not as an extra full loop."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from kubetide.cluster.loop.world import LoopResult
from kubetide.commands.run.cluster_autoscaler import ClusterAutoscalerComponent


@dataclass
class FakeDriver:
    due: float | None
    calls: list[tuple[str, float]] = field(default_factory=list)

    def tick(self, now: float) -> LoopResult:
        self.calls.append(("loop", now))
        return LoopResult(deletions_due_at=self.due)

    def deletions(self, now: float, *, carry: bool = True) -> LoopResult:
        # The live component counts the removed nodes itself, at once (not in the next loop's metrics).
        assert carry is False
        self.calls.append(("deletions", now))
        return LoopResult(deleted_between_loops={"underutilized": 1})


class Quiet:
    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


@dataclass
class FakeRuntime:
    wake: threading.Event = field(default_factory=threading.Event)


def component(driver: FakeDriver) -> ClusterAutoscalerComponent:
    c = object.__new__(ClusterAutoscalerComponent)
    c.driver = driver  # type: ignore[assignment]
    c.runtime = FakeRuntime()  # type: ignore[assignment]
    c.metrics = Quiet()  # type: ignore[assignment]
    c.options = Quiet()  # type: ignore[assignment]
    c.options.write_status_configmap = False
    c.provider = Quiet()  # type: ignore[assignment]
    c.period = 10.0
    c.last = None
    c._deletions_due = None
    c._deletion_wake = threading.Event()
    c._timer = None
    c.aws_report = None
    return c


def test_a_deletion_due_before_the_next_loop_wakes_the_loop_for_the_deletions_only() -> None:
    import time

    now = time.time()
    driver = FakeDriver(due=now + 0.2)
    c = component(driver)
    c.tick(now)
    assert c.runtime.wake.wait(5.0), "the timer did not wake the loop"
    woken = time.time()
    assert woken >= now + 0.19
    c.tick(woken)
    assert [kind for kind, _ in driver.calls] == ["loop", "deletions"]
    driver.due = None
    c.tick(now + 10.0)  # the next regular tick is a full loop again
    assert [kind for kind, _ in driver.calls] == ["loop", "deletions", "loop"]


def test_no_timer_without_a_deletion_due_and_stop_cancels_it() -> None:
    import time

    now = time.time()
    quiet = component(FakeDriver(due=None))
    quiet.tick(now)
    assert quiet._timer is None
    pending = component(FakeDriver(due=now + 60.0))
    pending.world = None
    pending.tick(now)
    assert pending._timer is not None and pending._timer.is_alive()
    pending.stop()
    pending._timer.join(1.0)
    assert not pending._timer.is_alive() and not pending.runtime.wake.is_set()
