"""The Cluster Autoscaler's runner: its loop every ``--scan-interval``, and the deletions due between
loops.

Upstream drains a tainted node in its own goroutine, which sleeps between its steps
(``--node-delete-delay-after-taint``, eviction retries, looks for the evicted pods): each step runs at its
moment, not at the next loop. The loop's result says when the next step is due
(``LoopResult.deletions_due_at``); the runner wakes then for a deletions pass (drain and delete, nothing
else), which says when the one after is due, and so on. One wake-up per distinct due time; a restart
(a new process) cancels them, as the goroutines die with the process.
"""

from __future__ import annotations

from typing import Protocol

from kubetide.clock.port import Clock, Handle
from kubetide.cluster.loop.result import LoopResult
from kubetide.runners.periodic import LoopReporter, PeriodicRunner

__all__ = ["ClusterAutoscalerRunner", "DeletionsReporter", "LoopDriver"]


class LoopDriver(Protocol):
    """What the runner calls on :class:`~kubetide.cluster.driver.ClusterAutoscalerDriver`."""

    def tick(self, now: float) -> LoopResult: ...

    def deletions(self, now: float, *, carry: bool = True) -> LoopResult: ...

    def restart(self, now: float) -> None: ...


class DeletionsReporter(LoopReporter[LoopResult], Protocol):
    """A CA reporter also told of each deletions pass between loops."""

    def deletions_finished(self, result: LoopResult, now: float, /) -> None: ...


class ClusterAutoscalerRunner(PeriodicRunner[LoopResult]):
    """``driver`` every ``scan_interval`` on ``clock``, with its deletion wake-ups.

    ``carry_deletions``: a deletions pass's removals are counted into the next loop's stats (the
    simulator's summary counts loops' stats); False when the reporter counts them at once (live mode's
    metrics, as upstream's goroutine increments the counters when it deletes)."""

    name = "ca-loop"
    priority = 30

    def __init__(
        self,
        driver: LoopDriver,
        clock: Clock,
        scan_interval: float,
        reporter: DeletionsReporter | None = None,
        *,
        carry_deletions: bool = True,
    ) -> None:
        super().__init__(clock, scan_interval, reporter)
        self.driver = driver
        self.deletions_reporter = reporter
        self.carry_deletions = carry_deletions
        self._woken: dict[float, Handle] = {}  # the deletions passes scheduled, by time

    def _loop(self, now: float) -> LoopResult:
        return self.driver.tick(now)

    def _after(self, result: LoopResult, now: float) -> None:
        self._wake_for_deletions(result, now)

    def deletions(self, now: float) -> None:
        """The deletions pass the clock woke the runner for."""
        self._woken.pop(now, None)
        result = self.driver.deletions(now, carry=self.carry_deletions)
        self._wake_for_deletions(result, now)
        if self.deletions_reporter is not None:
            self.deletions_reporter.deletions_finished(result, now)

    def _wake_for_deletions(self, result: LoopResult, now: float) -> None:
        due = result.deletions_due_at
        if due is not None and due > now and due not in self._woken:
            self._woken[due] = self.clock.at(due, self.deletions, priority=self.priority, name="ca-deletions")

    def restart(self) -> None:
        """A new CA process: in-memory state is gone (its deletion goroutines too: their wake-ups are
        cancelled); the cluster and the cloud keep theirs."""
        self._cancel_wake_ups()
        self.driver.restart(self.clock.now)

    def stop(self) -> None:
        super().stop()
        self._cancel_wake_ups()

    def _cancel_wake_ups(self) -> None:
        for wake in self._woken.values():
            self.clock.cancel(wake)
        self._woken.clear()
