"""A clock whose callbacks pass through a wrapper: live mode's gate around every loop a runner schedules.

The runner stays the same in both wings; live mode hands it a :class:`GatedClock` whose wrapper skips a
callback unless this replica may act (it leads, no stop was asked for) and its caches are synced, and
tracks the loop's health around the ones that run. Time and cancellation are the inner clock's.
"""

from __future__ import annotations

from collections.abc import Callable

from kubetide.clock.heap import Callback
from kubetide.clock.port import Clock, Handle

__all__ = ["GatedClock"]


class GatedClock:
    """``inner`` with every scheduled callback replaced by ``wrap(callback, name)``."""

    def __init__(self, inner: Clock, wrap: Callable[[Callback, str], Callback]) -> None:
        self.inner = inner
        self.wrap = wrap

    @property
    def now(self) -> float:
        return self.inner.now

    def every(
        self, period: float, callback: Callback, *, phase: float = 0.0, priority: int = 0, name: str = ""
    ) -> Handle:
        wrapped = self.wrap(callback, name)
        return self.inner.every(period, wrapped, phase=phase, priority=priority, name=name)

    def at(self, time: float, callback: Callback, *, priority: int = 0, name: str = "") -> Handle:
        return self.inner.at(time, self.wrap(callback, name), priority=priority, name=name)

    def cancel(self, handle: Handle) -> None:
        self.inner.cancel(handle)
