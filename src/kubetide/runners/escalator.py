"""Escalator's runner: its loop every ``scanInterval``, the first at start-up (upstream ``RunForever``).
A restart (a new process) forgets the driver's memory; taints and their times stay on the nodes."""

from __future__ import annotations

from kubetide.escalator.result import TickResult
from kubetide.runners.periodic import DriverRunner

__all__ = ["EscalatorRunner"]


class EscalatorRunner(DriverRunner[TickResult]):
    """:class:`~kubetide.escalator.driver.EscalatorDriver` on a clock."""

    name = "escalator-loop"
    priority = 60
