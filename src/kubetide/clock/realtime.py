"""Live mode's clock: the event heap on the wall clock, woken early by other threads.

:meth:`RealTimeClock.run` runs each callback when the wall clock reaches its time and otherwise waits,
until the next event's time or a wake-up, whichever comes first: :meth:`call_soon` from another thread
(a lease acquired: loop now) or :meth:`stop` (a signal). Everything else is scheduled from the clock's
own callbacks, on its thread, so the heap needs no lock.

A periodic firing that overruns skips the periods it missed instead of running back to back (as a Go
ticker drops ticks); one whose time passed while another callback ran fires once, late. A callback
that raises goes to ``on_error`` and the clock goes on (one bad loop must not stop an autoscaler); a
process keeps its schedule.
"""

from __future__ import annotations

import logging
import math
import threading
import time as _time
from collections import deque
from collections.abc import Callable

from kubetide.clock.heap import Callback, Event, EventHeap, Process

__all__ = ["ErrorHandler", "RealTimeClock"]

log = logging.getLogger(__name__)

ErrorHandler = Callable[[BaseException, str], None]  # (the exception, the callback's name)


def _log_error(exc: BaseException, name: str) -> None:
    log.error("%s failed", name or "a scheduled callback", exc_info=exc)


class RealTimeClock(EventHeap):
    """The heap on ``time`` (``time.time`` by default). ``waiter`` is what waits (a ``threading.Event``
    set by wake-ups; tests pass one whose wait advances a fake time)."""

    def __init__(
        self,
        *,
        time: Callable[[], float] = _time.time,
        on_error: ErrorHandler = _log_error,
        waiter: threading.Event | None = None,
    ) -> None:
        super().__init__(time())
        self._time = time
        self._on_error = on_error
        self._waiter = waiter if waiter is not None else threading.Event()
        self._soon: deque[tuple[Callback, str]] = deque()  # appended by other threads
        self._stopped = False

    @property
    def now(self) -> float:
        """The wall clock, never behind a time already handed to a callback."""
        return max(self._now, self._time())

    def at(self, time: float, callback: Callback, *, priority: int = 0, name: str = "") -> Event:
        """Run ``callback`` at ``time``; a time already past runs as soon as the clock is free (a time
        computed from a callback's ``now`` may have passed by the time the callback schedules it)."""
        return super().at(max(time, self._now), callback, priority=priority, name=name)

    def every(
        self, period: float, callback: Callback, *, phase: float = 0.0, priority: int = 0, name: str = ""
    ) -> Process:
        """Run ``callback`` ``phase`` seconds from the wall clock's now, then every ``period``."""
        self._now = self.now
        return super().every(period, callback, phase=phase, priority=priority, name=name)

    def call_soon(self, callback: Callback, name: str = "") -> None:
        """Run ``callback`` on the clock's thread as soon as it is free. Safe from any thread."""
        self._soon.append((callback, name))
        self._waiter.set()

    def stop(self) -> None:
        """End :meth:`run` once the running callback returns. Safe from any thread and from a signal
        handler (it sets a flag and the waiter, as the live runtime's stop event always was)."""
        self._stopped = True
        self._waiter.set()

    def run(self) -> None:
        """Run callbacks as their times come until :meth:`stop`."""
        while not self._stopped:
            while self._soon:
                callback, name = self._soon.popleft()
                self.at(self._now, callback, name=name)
            self._now = self.now
            if self.peek() <= self._now:
                event = self._pop()
                try:
                    event.callback(self._now)
                except Exception as exc:
                    self._on_error(exc, event.name)
                continue
            wait = self.peek() - self._now
            if self._waiter.wait(None if wait == math.inf else wait):
                self._waiter.clear()  # then look at the queue again: a wake-up is never lost

    def _catch_up(self, process: Process) -> int:
        """After a firing, the next multiple of the period after the wall clock: the ones a long
        firing overran are skipped."""
        elapsed = self.now - process.first
        return max(process.count, math.floor(elapsed / process.period) + 1)
