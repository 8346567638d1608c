"""The simulator's clock: virtual time on the event heap, jumping from one event to the next.

An idle simulated day costs nothing: nothing waits, :meth:`VirtualClock.run` takes the events in order
and sets the time to each one's. A run is a pure function of what was scheduled (the heap's order at
equal times is ``(priority, sequence)``), so the same scenario and seed give the same outputs.
"""

from __future__ import annotations

import heapq
import math

from kubetide.clock.heap import EventHeap, SchedulingError

__all__ = ["VirtualClock"]


class VirtualClock(EventHeap):
    """Virtual time plus the event heap. ``run(until)`` processes events up to and including ``until``."""

    def step(self) -> bool:
        """Run the next live event; False when there is none."""
        if self.peek() == math.inf:
            return False
        event = heapq.heappop(self._heap)[3]  # not through _pop: this is the simulator's innermost loop
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
