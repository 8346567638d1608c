"""What live CA does with each loop's result, as the runner's reporter: CA's metrics, one log line per
event, the loop's plan (one block at ``-v=4``, and kept for ``/debug/plan``: :mod:`.published`), the
status ConfigMap, the provider's own additions, and the loop's failure raised for the runtime to log
and count.

A deletions pass between loops (a drain step) updates the metrics at once (as upstream's goroutine
increments its counters when it deletes) and logs its events; its failure is a warning, since the
next loop retries it. :meth:`CALoopReporter.report` is what ``--once`` prints of the last loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol

from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.explain import format_time
from kubetide.cluster.loop.plan_text import render_plan
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.status import (
    ClusterAutoscalerStatus,
    format_last_updated,
    format_rfc3339,
    render_status_yaml,
)
from kubetide.kube.failures import LoopFailed
from kubetide.kube.rest import KubeStatusError
from kubetide.live.cluster_autoscaler.metrics import CAMetrics
from kubetide.live.cluster_autoscaler.published import PublishedPlans
from kubetide.live.guard import LeadershipLost
from kubetide.live.guard.cluster import StatusWriter

__all__ = ["CALoopReporter", "StatusAmendment"]

log = logging.getLogger("kubetide.cluster-autoscaler")


class StatusAmendment(Protocol):
    """A provider's additions to each loop's report (the aws provider's missing and unpriced groups)."""

    def status(self, status: ClusterAutoscalerStatus) -> ClusterAutoscalerStatus:
        """The status as the ConfigMap should show it."""
        ...

    def after_loop(self) -> None: ...


class CALoopReporter:
    def __init__(
        self,
        metrics: CAMetrics,
        cloud: CloudProvider,
        options: AutoscalingOptions,
        status_map: StatusWriter,
        amendment: StatusAmendment | None = None,
        *,
        published: PublishedPlans | None = None,
        world_of_loop: Callable[[], World | None] = lambda: None,
    ) -> None:
        """``published``: where each loop's plan is kept for ``/debug/plan``, with the world the loop
        read (``world_of_loop``: the driver's)."""
        self.published = published
        self.world_of_loop = world_of_loop
        self.metrics = metrics
        self.cloud = cloud
        self.options = options
        self.status_map = status_map
        self.amendment = amendment
        self.last: LoopResult | None = None
        self._started = 0.0

    def loop_started(self, now: float) -> None:
        self._started = time.monotonic()
        self.metrics.loop_started(now)

    def loop_finished(self, result: LoopResult, now: float) -> None:
        self.last = result
        self.metrics.loop_finished(result, now, time.monotonic() - self._started, self.cloud)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s", render_plan(result, format_time), extra={"loopTime": format_rfc3339(now)})
        if self.published is not None:
            self.published.observe(result, self.world_of_loop(), now)
        _log_events(result)
        status = result.status
        if status is not None and self.amendment is not None:
            status = self.amendment.status(status)
        if status is not None and self.options.write_status_configmap:
            try:
                self.status_map.write(render_status_yaml(status, now), format_last_updated(now))
            except LeadershipLost as exc:
                log.debug("status ConfigMap not written: %s", exc)
            except KubeStatusError as exc:
                log.warning("status ConfigMap not written: %s", exc)
        if self.amendment is not None:
            self.amendment.after_loop()
        for problem in result.write_problems:
            log.warning("%s", problem)
        if result.error is not None:
            raise LoopFailed(result.error)

    def deletions_finished(self, result: LoopResult, now: float) -> None:
        self.metrics.deletions_finished(result, now)
        plan = result.plan
        if log.isEnabledFor(logging.DEBUG) and ((plan is not None and plan.phases) or result.error):
            text = render_plan(result, format_time, between_loops=True)
            log.debug("%s", text, extra={"loopTime": format_rfc3339(now)})
        if self.published is not None:
            self.published.observe_deletions(result, now)
        _log_events(result)
        if result.error is not None:
            log.warning("deletions between loops: %s", result.error)

    def report(self) -> str:
        """The last loop, for ``--once``."""
        r = self.last
        if r is None:
            return "no loop ran"
        lines = [
            f"scale-up: {r.scale_up_result or 'none'}",
            f"scale-down: {r.scale_down_result or 'none'}",
        ]
        lines += [
            f"unneeded: {name} (since {format_rfc3339(since)})" for name, since in sorted(r.unneeded.items())
        ]
        lines += [f"unremovable: {name}: {why}" for name, why in sorted(r.unremovable.items())]
        lines += [f"event {ev.type} {ev.reason} {ev.object}: {ev.message}" for ev in r.events]
        if r.error:
            lines.append(f"error: {r.error}")
        return "\n".join(lines)


def _log_events(result: LoopResult) -> None:
    for ev in result.events:
        log.info(
            "%s %s: %s", ev.reason, ev.object, ev.message, extra={"reason": ev.reason, "object": ev.object}
        )
