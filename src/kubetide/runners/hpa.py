"""The HPA's runner: the driver ticks every ``period``, and reconciles at each tick the HPAs that are due.

The driver keeps each HPA's own due time (the sync period, or the kubetide resource's
``spec.syncPeriod``); the tick period says how often it is asked. The simulator ticks at the
controller's sync period (a shorter ``spec.syncPeriod`` is honoured up to the tick); live mode ticks
more often (every 2 s at most), so short per-HPA periods hold and a new HPA is seen within a tick. A
restart (a controller-manager restart) forgets the recommendations and scale events.
"""

from __future__ import annotations

from kubetide.hpa.driver import Synced
from kubetide.runners.periodic import DriverRunner

__all__ = ["HPARunner", "HPATicks"]

HPATicks = tuple[Synced, ...]  # one tick's reconciled HPAs


class HPARunner(DriverRunner[HPATicks]):
    """:class:`~kubetide.hpa.driver.HPADriver` on a clock."""

    name = "hpa-sync"
    priority = 20
