"""One runner per autoscaler, for the simulator and live mode alike: its loop driver on a clock, and the
wake-ups between loops.

A runner schedules its driver on a :class:`~kubetide.clock.port.Clock` (the simulator's virtual clock,
or live mode's real-time one behind its gate) and hands each loop's result to a reporter: the
simulator's keeps its statistics and outputs, live mode's exports metrics, logs and writes the status.
What the wings pass is all that differs between them: the ports the driver was built on, the clock,
the reporter.

- :mod:`~kubetide.runners.cluster_autoscaler`: CA's loop every ``--scan-interval``, and the deletions
  due between loops (``LoopResult.deletions_due_at``: a drain's next step, as CA's deletion goroutine
  sleeps between steps).
- :mod:`~kubetide.runners.hpa`: the HPA driver's tick (each HPA reconciled at its own due time).
- :mod:`~kubetide.runners.escalator`: Escalator's loop every ``scanInterval``.
"""

from kubetide.runners.cluster_autoscaler import ClusterAutoscalerRunner, DeletionsReporter
from kubetide.runners.escalator import EscalatorRunner
from kubetide.runners.hpa import HPARunner
from kubetide.runners.periodic import DriverRunner, LoopReporter, PeriodicRunner, RestartableDriver, Runner

__all__ = [
    "ClusterAutoscalerRunner",
    "DeletionsReporter",
    "DriverRunner",
    "EscalatorRunner",
    "HPARunner",
    "LoopReporter",
    "PeriodicRunner",
    "RestartableDriver",
    "Runner",
]
