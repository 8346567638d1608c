"""The wall-clock periodic runner of the live commands: ``tick(now)`` every ``period`` seconds.

Tick times are ``start + k * period``, computed by multiplication as the simulator's engine does, so
the schedule never drifts however long ticks take; a tick that overruns skips the periods it missed
(as a Go ticker drops ticks) instead of running back to back. The stop event interrupts the wait at
once. A tick that raises is logged (one line naming the cause; the traceback only at ``-v=4``) and
counted in ``kubetide_loop_errors_total{loop}`` and the loop goes on: one bad iteration must not stop
an autoscaler. A tick raises :class:`LoopFailed` for a failure it already understands (the loop's own
error, e.g. the cloud provider could not be refreshed during an API outage).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from kubetide.kube.failures import log_failure
from kubetide.kube.metrics import LOOP_ERRORS

__all__ = ["LoopFailed", "run_every"]

log = logging.getLogger(__name__)


class LoopFailed(Exception):
    """A loop that failed as a whole for a reason it reports (the message): not a bug."""


def run_every(
    period: float,
    tick: Callable[[float], None],
    stop: threading.Event,
    *,
    name: str = "main",
    clock: Callable[[], float] = time.time,
    wake: threading.Event | None = None,
) -> None:
    """Call ``tick(clock())`` now and at every later multiple of ``period`` until ``stop`` is set.

    ``wake`` (optional) runs a tick at once when set, e.g. when this replica becomes leader, instead of
    waiting out the period; whoever sets ``stop`` must set ``wake`` too, since the loop then waits on it.
    """
    if period <= 0:
        raise ValueError("period must be positive")
    waiter = wake if wake is not None else stop
    start = clock()
    k = 0  # the next regular tick is at start + k * period
    while not stop.is_set():
        try:
            tick(clock())
        except Exception as exc:
            LOOP_ERRORS.labels(loop=name).inc()
            log_failure(
                log, f"{name} loop: iteration failed (next one at the next period)", exc, logging.ERROR
            )
        now = clock()
        # After a regular tick, move on at least one period; after an extra (woken) one, keep the
        # regular schedule where it was.
        k = max(k, math.floor((now - start) / period) + 1)
        if waiter.wait(max(0.0, start + k * period - now)):
            if waiter is wake:
                wake.clear()
        else:
            k += 1
