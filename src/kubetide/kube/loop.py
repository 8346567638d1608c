"""The wall-clock periodic runner of the live commands: ``tick(now)`` every ``period`` seconds.

Tick times are ``start + k * period``, computed by multiplication as the simulator's engine does, so
the schedule never drifts however long ticks take; a tick that overruns skips the periods it missed
(as a Go ticker drops ticks) instead of running back to back. The stop event interrupts the wait at
once. A tick that raises is logged and counted in ``kubetide_loop_errors_total{loop}`` and the loop
goes on: one bad iteration must not stop an autoscaler.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from kubetide.kube.metrics import LOOP_ERRORS

__all__ = ["run_every"]

log = logging.getLogger(__name__)


def run_every(
    period: float,
    tick: Callable[[float], None],
    stop: threading.Event,
    *,
    name: str = "main",
    clock: Callable[[], float] = time.time,
) -> None:
    """Call ``tick(clock())`` now and at every later multiple of ``period`` until ``stop`` is set."""
    if period <= 0:
        raise ValueError("period must be positive")
    start = clock()
    k = 0
    while not stop.is_set():
        try:
            tick(clock())
        except Exception:
            LOOP_ERRORS.labels(loop=name).inc()
            log.exception("%s loop: iteration failed; next one at the next period", name)
        now = clock()
        k = max(k + 1, math.floor((now - start) / period) + 1)
        if stop.wait(max(0.0, start + k * period - now)):
            break
