"""The clock port: what a runner needs of time, whether simulated or real.

A runner (:mod:`kubetide.runners`) schedules its driver's loops with :meth:`Clock.every` and its
wake-ups between loops (a drain step due, a restart) with :meth:`Clock.at`; it never sleeps and never
reads the wall clock. Every callback receives the time it runs at, which is the ``now`` the decision
cores are given. Callbacks due at the same time run in ``(priority, scheduling order)`` order, lower
priority first: the simulator relies on it for reproducible runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "Handle"]


class Handle(Protocol):
    """A scheduled callback or periodic process; cancelling it drops what has not run yet."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Time and a schedule of callbacks. Scheduling is done from the clock's own callbacks (one
    thread); an implementation that takes wake-ups from other threads says so."""

    @property
    def now(self) -> float:
        """The current time, in seconds (Unix time live; from the scenario's start in the simulator)."""
        ...

    def every(
        self,
        period: float,
        callback: Callable[[float], object],
        *,
        phase: float = 0.0,
        priority: int = 0,
        name: str = "",
    ) -> Handle:
        """Run ``callback`` at ``now + phase`` and then at every ``period`` after that first time
        (times multiplied, not summed, so they never drift). SchedulingError for a period <= 0."""
        ...

    def at(
        self, time: float, callback: Callable[[float], object], *, priority: int = 0, name: str = ""
    ) -> Handle:
        """Run ``callback`` once at ``time`` (>= now; SchedulingError otherwise)."""
        ...

    def cancel(self, handle: Handle) -> None:
        """Drop a callback or process scheduled here; nothing happens if it already ran."""
        ...
