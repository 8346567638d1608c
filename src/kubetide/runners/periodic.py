"""What every runner shares: a loop every period on the clock, each result handed to a reporter.

The priorities order the autoscalers' loops due at the same instant, which only the simulator's clock
makes common: HPA syncs (20) before the cluster autoscaler's loop (30) before Escalator's (60, after the
simulated scheduler's 50, so a loop at t=0 sees the scenario's first pods bound). Changing them
changes every simulation's outputs.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from kubetide.clock.port import Clock, Handle

__all__ = ["DriverRunner", "LoopReporter", "PeriodicRunner", "RestartableDriver", "Runner"]

R_contra = TypeVar("R_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)
R = TypeVar("R")


class LoopReporter(Protocol[R_contra]):
    """What a wing does around each loop: the simulator records statistics and outputs, live mode
    exports metrics, logs, and writes status. ``loop_finished`` may raise to report the loop as failed
    (live mode's clock logs and counts it)."""

    def loop_started(self, now: float) -> None: ...

    def loop_finished(self, result: R_contra, now: float, /) -> None: ...


class Runner(Protocol):
    """A runner as live mode's runtime drives it."""

    def start(self, phase: float = 0.0) -> None:
        """Schedule the loop: first at ``now + phase``, then every period."""
        ...

    def tick(self, now: float) -> None:
        """One loop now (``--once``, or a lease just acquired)."""
        ...

    def stop(self) -> None:
        """Cancel everything the runner scheduled."""
        ...


class PeriodicRunner(Generic[R]):
    """A loop named ``name`` every ``period`` on ``clock``; subclasses say what one loop is (``_loop``)."""

    name = "loop"
    priority = 0

    def __init__(self, clock: Clock, period: float, reporter: LoopReporter[R] | None = None) -> None:
        self.clock = clock
        self.period = period
        self.reporter = reporter
        self._process: Handle | None = None

    def start(self, phase: float = 0.0) -> None:
        self._process = self.clock.every(
            self.period, self.tick, phase=phase, priority=self.priority, name=self.name
        )

    def tick(self, now: float) -> None:
        if self.reporter is not None:
            self.reporter.loop_started(now)
        result = self._loop(now)
        self._after(result, now)
        if self.reporter is not None:
            self.reporter.loop_finished(result, now)

    def _loop(self, now: float) -> R:
        raise NotImplementedError

    def _after(self, result: R, now: float) -> None:
        """What the runner schedules from a loop's result, before the reporter sees it (which may
        raise)."""

    def stop(self) -> None:
        if self._process is not None:
            self.clock.cancel(self._process)
            self._process = None


class RestartableDriver(Protocol[R_co]):
    """A loop driver whose restart needs no time (the HPA's, Escalator's)."""

    def tick(self, now: float) -> R_co: ...

    def restart(self) -> None:
        """A new process: the driver's memory is gone; the cluster and the cloud keep theirs."""
        ...


class DriverRunner(PeriodicRunner[R]):
    """A :class:`RestartableDriver`'s ``tick`` every period."""

    def __init__(
        self,
        driver: RestartableDriver[R],
        clock: Clock,
        period: float,
        reporter: LoopReporter[R] | None = None,
    ) -> None:
        super().__init__(clock, period, reporter)
        self.driver = driver

    def _loop(self, now: float) -> R:
        return self.driver.tick(now)

    def restart(self) -> None:
        self.driver.restart()
