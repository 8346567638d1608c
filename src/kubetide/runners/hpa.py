"""The HPA's runner: the driver ticks every ``period``, and reconciles at each tick the HPAs that are due.

The driver keeps each HPA's own due time (the sync period, or the kubetide resource's
``spec.syncPeriod``); the tick period says how often it is asked. The simulator ticks at the
controller's sync period (a shorter ``spec.syncPeriod`` is honoured up to the tick); live mode ticks
more often (every 2 s at most), so short per-HPA periods hold and a new HPA is seen within a tick. A
restart (a controller-manager restart) forgets the recommendations and scale events.
"""

from __future__ import annotations

import math

from kubetide.hpa.driver import Synced
from kubetide.runners.periodic import DriverRunner

__all__ = ["HPARunner", "HPATicks", "live_tick"]

HPATicks = tuple[Synced, ...]  # one tick's reconciled HPAs


class HPARunner(DriverRunner[HPATicks]):
    """:class:`~kubetide.hpa.driver.HPADriver` on a clock."""

    name = "hpa-sync"
    priority = 20


def live_tick(sync_period: float, at_most: float = 2.0) -> float:
    """Live mode's tick: the longest one of at most ``at_most`` seconds that divides the sync period.

    An HPA is due one period after its last sync; ticking at a divisor of the period lands a tick on
    every due time, so the HPAs sync every period as upstream's work queue re-adds them. A tick that
    does not divide it (2 s against 15 s) syncs at the first tick after: every 16 s, a second late
    each time.
    """
    if sync_period <= at_most:
        return sync_period
    return sync_period / math.ceil(sync_period / at_most - 1e-9)
