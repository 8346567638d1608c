"""The event heap both clocks run: timed callbacks in ``(time, priority, sequence)`` order, in the spirit
of SimPy.

Events at the same time run lower priority first, then in the order they were scheduled, so what runs
when is a pure function of what was scheduled (no dependence on hashing or wall time). Callbacks get
the time they run at as their argument (``now`` is passed in, never read by the code called).

Periodic processes fire at ``first + k * period``: times are computed by multiplication, not by
summing floats, so they do not drift over a long run. How ``k`` moves on after a firing is the clock's
choice (:meth:`EventHeap._catch_up`): the virtual clock takes every period, the real-time clock skips
the periods a firing overran.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from kubetide.clock.port import Handle

__all__ = ["Callback", "Event", "EventHeap", "Process", "SchedulingError"]

Callback = Callable[[float], object]


class SchedulingError(ValueError):
    """An event scheduled in the past, at a non-finite time, or with a non-positive period."""


@dataclass(eq=False)
class Event:
    """A scheduled callback; ``cancel()`` it to drop it (it stays in the heap, skipped when reached)."""

    time: float
    priority: int
    sequence: int
    callback: Callback = field(compare=False)
    name: str = field(default="", compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


@dataclass(eq=False)
class Process:
    """A callback repeated every ``period``; ``cancel()`` stops it (the pending firing included)."""

    heap: EventHeap
    callback: Callback
    period: float
    first: float
    priority: int
    name: str
    count: int = 0
    cancelled: bool = False
    _pending: Event | None = None

    @property
    def next_time(self) -> float:
        return self.first + self.count * self.period

    def cancel(self) -> None:
        self.cancelled = True
        if self._pending is not None:
            self._pending.cancel()

    def _arm(self) -> None:
        self._pending = self.heap.at(self.next_time, self._fire, priority=self.priority, name=self.name)

    def _fire(self, now: float) -> None:
        self.count += 1
        try:
            self.callback(now)
        finally:  # a callback that raised (live mode logs it and goes on) keeps its schedule
            if not self.cancelled:  # the callback may have cancelled its own process
                self.count = self.heap._catch_up(self)
                self._arm()


class EventHeap:
    """Time plus the heap of events; the clocks say how time advances (:meth:`now` and running)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        # Entries are (time, priority, sequence, event): tuples compare in C, much faster than dataclasses.
        self._heap: list[tuple[float, int, int, Event]] = []
        self._sequence = 0
        self.processed = 0

    @property
    def now(self) -> float:
        return self._now

    def at(self, time: float, callback: Callback, *, priority: int = 0, name: str = "") -> Event:
        """Run ``callback`` at absolute ``time`` (>= now)."""
        if not math.isfinite(time):
            raise SchedulingError(f"cannot schedule {name or 'an event'} at {time}")
        if time < self._now:
            raise SchedulingError(
                f"cannot schedule {name or 'an event'} at {time:g}, before now ({self._now:g})"
            )
        event = Event(float(time), priority, self._sequence, callback, name)
        heapq.heappush(self._heap, (event.time, priority, self._sequence, event))
        self._sequence += 1
        return event

    def after(self, delay: float, callback: Callback, *, priority: int = 0, name: str = "") -> Event:
        """Run ``callback`` ``delay`` seconds from now."""
        if delay < 0:
            raise SchedulingError(f"cannot schedule {name or 'an event'} {delay:g}s in the past")
        return self.at(self._now + delay, callback, priority=priority, name=name)

    def every(
        self, period: float, callback: Callback, *, phase: float = 0.0, priority: int = 0, name: str = ""
    ) -> Process:
        """Run ``callback`` at ``now + phase``, then every ``period`` seconds until cancelled."""
        if not (math.isfinite(period) and period > 0):
            raise SchedulingError(f"the period of {name or 'a process'} must be > 0, got {period}")
        if not (math.isfinite(phase) and phase >= 0):
            raise SchedulingError(f"the phase of {name or 'a process'} must be >= 0, got {phase}")
        process = Process(self, callback, float(period), self._now + phase, priority, name)
        process._arm()
        return process

    def cancel(self, handle: Handle) -> None:
        handle.cancel()

    def peek(self) -> float:
        """Time of the next live event, or ``inf`` when none is left."""
        while self._heap and self._heap[0][3].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else math.inf

    def _pop(self) -> Event:
        """The next live event, taken off the heap (call :meth:`peek` first: there must be one)."""
        self.processed += 1
        return heapq.heappop(self._heap)[3]

    def _catch_up(self, process: Process) -> int:
        """The count of the process's next firing once one has run: every period (the virtual clock)."""
        return process.count

    def __len__(self) -> int:
        """Scheduled events not yet run (cancelled ones may still be counted until reached)."""
        return len(self._heap)
