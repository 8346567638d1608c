"""A wall clock for tests of the real-time clock and the live runtime: waiting advances it instead of
sleeping, and a hook acts meanwhile as another thread would (a lease acquired, a signal)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class FakeTime(threading.Event):
    """The clock's waiter: a wait with a timeout advances ``now`` by it (returning whether a wake-up
    came), ``on_wait`` may act as another thread would meanwhile; a wait without one (nothing
    scheduled) must have been woken."""

    def __init__(self, now: float = 1000.0) -> None:
        super().__init__()
        self.now = now
        self.waits: list[float | None] = []
        self.on_wait: Callable[[float | None], None] | None = None

    def time(self) -> float:
        return self.now

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        if self.on_wait is not None:
            self.on_wait(timeout)
        if self.is_set():
            return True
        assert timeout is not None, "the clock waited for ever with nothing to wake it"
        self.now += timeout
        return self.is_set()
