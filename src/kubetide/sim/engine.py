"""The discrete-event core: a virtual clock and a heap of timed callbacks, in the spirit of SimPy.

Time jumps from one event to the next, so an idle simulated day costs nothing. Events at the same time
run in ``(priority, sequence)`` order: lower priority first, then the order they were scheduled in, so
a run is a pure function of what was scheduled (no dependence on hashing or wall time). Callbacks get
the current time as their argument (``now`` is always passed in, never read from a clock).

Periodic processes (controllers at their sync periods) fire at ``start + phase + k * period``: times are
computed by multiplication, not by summing floats, so they do not drift over a long run.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Callback", "Engine", "Event", "Process", "SchedulingError"]

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

    engine: Engine
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
        self._pending = self.engine.schedule_at(
            self.next_time, self._fire, priority=self.priority, name=self.name
        )

    def _fire(self, now: float) -> None:
        self.count += 1
        self.callback(now)
        if not self.cancelled:  # the callback may have cancelled its own process
            self._arm()


class Engine:
    """Virtual time plus the event heap. ``run(until)`` processes events up to and including ``until``."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        # Entries are (time, priority, sequence, event): tuples compare in C, much faster than dataclasses.
        self._heap: list[tuple[float, int, int, Event]] = []
        self._sequence = 0
        self.processed = 0

    @property
    def now(self) -> float:
        return self._now

    def schedule_at(self, time: float, callback: Callback, *, priority: int = 0, name: str = "") -> Event:
        """Run ``callback(time)`` at absolute ``time`` (>= now)."""
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

    def schedule_in(self, delay: float, callback: Callback, *, priority: int = 0, name: str = "") -> Event:
        """Run ``callback`` ``delay`` seconds from now."""
        if delay < 0:
            raise SchedulingError(f"cannot schedule {name or 'an event'} {delay:g}s in the past")
        return self.schedule_at(self._now + delay, callback, priority=priority, name=name)

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

    def peek(self) -> float:
        """Time of the next live event, or ``inf`` when none is left."""
        while self._heap and self._heap[0][3].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else math.inf

    def step(self) -> bool:
        """Run the next live event; False when there is none."""
        if self.peek() == math.inf:
            return False
        event = heapq.heappop(self._heap)[3]
        self._now = event.time
        self.processed += 1
        event.callback(event.time)
        return True

    def run(self, until: float) -> None:
        """Run every event with ``time <= until`` (including ones scheduled meanwhile); then now = until."""
        if until < self._now:
            raise SchedulingError(f"cannot run until {until:g}, before now ({self._now:g})")
        while self.peek() <= until:
            self.step()
        self._now = float(until)

    def __len__(self) -> int:
        """Scheduled events not yet run (cancelled ones may still be counted until reached)."""
        return len(self._heap)
