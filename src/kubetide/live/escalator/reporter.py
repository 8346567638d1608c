"""What live Escalator does with each loop's result, as the runner's reporter: Escalator's metrics, the
dry run's would-be actions counted, its log lines in Escalator's words, and what ``--once`` prints."""

from __future__ import annotations

import logging

from kubetide.escalator.result import TickResult
from kubetide.kube.metrics import DRY_RUN_ACTIONS
from kubetide.live.escalator.metrics import EscalatorMetrics

__all__ = ["EscalatorLoopReporter"]

log = logging.getLogger("kubetide.escalator")


class EscalatorLoopReporter:
    def __init__(self, metrics: EscalatorMetrics, component: str) -> None:
        self.metrics = metrics
        self.component = component
        self.last: TickResult | None = None

    def loop_started(self, now: float) -> None:
        pass

    def loop_finished(self, result: TickResult, now: float) -> None:
        self.last = result
        self.metrics.update(result.metrics, result.observations)
        for action in result.dry_run_actions:
            DRY_RUN_ACTIONS.labels(component=self.component, action=str(action.kind)).inc()
        for line in result.log_lines():
            log.info("%s", line)
        for error in result.errors:
            if not error.startswith("nodegroup "):  # a group's errors are among its log lines
                log.warning("%s", error)

    def report(self) -> str:
        """The last loop, for ``--once``."""
        r = self.last
        if r is None:
            return "no loop ran"
        return "\n".join(r.log_lines() or ("no node groups",))
