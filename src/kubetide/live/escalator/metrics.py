"""Escalator's Prometheus metrics under their upstream names, from the plain values the core reports.

The core (:mod:`kubetide.escalator.metrics`) keeps every series' current value (gauges, counters'
running totals) and each tick's histogram observations; this module mirrors them into
prometheus_client's default registry, which ``/metrics`` serves, so dashboards and alerts written for
Escalator keep working. Series are created as they first appear (as upstream's labelled vectors).
Counters are exported as gauges of the running total under the exact upstream name: prometheus_client
would append ``_total`` to a Counter, and upstream's counters (``escalator_run_count``, ...) have none.
"""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, Gauge, Histogram

from kubetide.escalator.metrics import HISTOGRAM_BUCKETS
from kubetide.escalator.samples import MetricKind, Sample

__all__ = ["EscalatorMetrics"]


class EscalatorMetrics:
    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self.registry = registry
        self._gauges: dict[str, Gauge] = {}
        self._histograms: dict[str, Histogram] = {}

    def update(self, metrics: tuple[Sample, ...], observations: tuple[Sample, ...]) -> None:
        """Set every series to the core's current value; observe this tick's histogram samples."""
        for s in metrics:
            if s.kind == MetricKind.HISTOGRAM:
                continue
            gauge = self._gauge(s)
            (gauge.labels(*[v for _, v in s.labels]) if s.labels else gauge).set(s.value)
        for s in observations:
            hist = self._histogram(s)
            (hist.labels(*[v for _, v in s.labels]) if s.labels else hist).observe(s.value)

    def _gauge(self, s: Sample) -> Gauge:
        if s.name not in self._gauges:
            kind = "counter" if s.kind == MetricKind.COUNTER else "gauge"
            self._gauges[s.name] = Gauge(
                s.name, f"Escalator's {s.name} ({kind})", [k for k, _ in s.labels], registry=self.registry
            )
        return self._gauges[s.name]

    def _histogram(self, s: Sample) -> Histogram:
        if s.name not in self._histograms:
            self._histograms[s.name] = Histogram(
                s.name,
                f"Escalator's {s.name}",
                [k for k, _ in s.labels],
                buckets=HISTOGRAM_BUCKETS,
                registry=self.registry,
            )
        return self._histograms[s.name]
