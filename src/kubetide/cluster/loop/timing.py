"""How long each of CA's functions took in one loop, for ``cluster_autoscaler_function_duration_seconds``.

The labels are CA 1.31's ``FunctionLabel`` values (``metrics/metrics.go``), each observed where
``core/static_autoscaler.go`` (``RunOnce``) observes it:

- ``cloudProviderRefresh``: ``CloudProvider.Refresh()``, failed or not;
- ``updateClusterState``: from the start of ``RunOnce`` to the cluster state updated (node lists, the
  refresh, the snapshot, templates, ``updateClusterState``); not when the loop stops before;
- ``filterOutSchedulable``: the pending pods that fit on existing or upcoming nodes
  (``core/podlistprocessor/filter_out_schedulable.go``);
- ``scaleUp``: the scale-up orchestrator, only in a loop that asks it (pods to help, not all too new);
- ``findUnneeded``: the scale-down planner's pass over the candidates (kubetide's planner also picks
  the nodes to delete there, which CA times under ``scaleDown``);
- ``scaleDown``: starting the deletions, only when scale-down is not in cooldown;
- ``main``: the whole loop (``loop/run.go``), observed by the live runner around the driver.

The core reads no clock: live mode passes a stopwatch (``time.perf_counter``) and each loop records
``(label, seconds)`` on its result; the simulator passes none, so nothing is read or recorded (a
virtual clock has no durations to show).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

__all__ = ["FunctionLabel", "FunctionTimer", "Stopwatch"]

# Seconds from an arbitrary origin, read only to measure how long a function took (never to decide).
Stopwatch = Callable[[], float]


class FunctionLabel(StrEnum):
    MAIN = "main"
    CLOUD_PROVIDER_REFRESH = "cloudProviderRefresh"
    UPDATE_STATE = "updateClusterState"
    FILTER_OUT_SCHEDULABLE = "filterOutSchedulable"
    SCALE_UP = "scaleUp"
    FIND_UNNEEDED = "findUnneeded"
    SCALE_DOWN = "scaleDown"


class FunctionTimer:
    """One loop's timings, appended to ``durations`` (the loop result's list); without a stopwatch
    every call is a no-op."""

    def __init__(self, stopwatch: Stopwatch | None = None, durations: list[tuple[str, float]] | None = None):
        self._read = stopwatch
        self.durations: list[tuple[str, float]] = durations if durations is not None else []
        self.loop_started = self.start()

    def start(self) -> float:
        return self._read() if self._read is not None else 0.0

    def observe(self, label: FunctionLabel, started: float) -> None:
        if self._read is not None:
            self.durations.append((str(label), self._read() - started))
