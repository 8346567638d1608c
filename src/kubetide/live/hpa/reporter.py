"""What the live HPA does with each tick's syncs, as the runner's reporter: kube-controller-manager's
metrics, a log line per problem and per rescale, and what ``--once`` prints."""

from __future__ import annotations

import logging

from kubetide.hpa.driver import Synced
from kubetide.live.hpa.controller_metrics import HPAControllerMetrics

__all__ = ["HPALoopReporter"]

log = logging.getLogger("kubetide.hpa")


class HPALoopReporter:
    def __init__(self, metrics: HPAControllerMetrics) -> None:
        self.metrics = metrics
        self.last: tuple[Synced, ...] = ()

    def loop_started(self, now: float) -> None:
        pass

    def loop_finished(self, synced: tuple[Synced, ...], now: float) -> None:
        self.last = synced
        self.metrics.observe(synced)
        for one in synced:
            r = one.result
            if one.problem:
                log.warning("%s: %s", one.key, one.problem, extra={"hpa": one.key})
            if r is not None and r.scaled:
                log.info(
                    "%s: %s -> %d (%s)",
                    one.key,
                    r.current_replicas,
                    r.desired_replicas,
                    r.rescale_reason,
                    extra={"hpa": one.key, "from": r.current_replicas, "to": r.desired_replicas},
                )

    def report(self) -> str:
        """The last tick's HPAs, for ``--once``."""
        lines = []
        for synced in self.last:
            r = synced.result
            if r is None:
                lines.append(f"{synced.key}: {synced.problem}")
                continue
            change = (
                f"{r.current_replicas} -> {r.desired_replicas}"
                if r.scaled
                else f"stays at {r.current_replicas}"
            )
            lines.append(f"{synced.key}: {change} ({r.rescale_reason or r.error or 'within tolerance'})")
            lines += [f"  {c.type}={c.status} {c.reason}: {c.message}" for c in r.status.conditions]
        return "\n".join(lines) or "no HorizontalPodAutoscalers"
