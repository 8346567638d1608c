"""Escalator's metrics reach Prometheus under their upstream names, counters without ``_total``."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from kubetide.escalator.samples import MetricKind, Sample
from kubetide.live.escalator.metrics import EscalatorMetrics


def test_gauges_counters_and_histograms_keep_upstream_names() -> None:
    registry = CollectorRegistry()
    metrics = EscalatorMetrics(registry)
    group = (("node_group", "batch"),)
    metrics.update(
        (
            Sample("escalator_run_count", (), 3.0, MetricKind.COUNTER),
            Sample("escalator_node_group_pods", group, 4.0),
        ),
        (Sample("escalator_node_group_scale_lock_duration", group, 120.0, MetricKind.HISTOGRAM),),
    )
    metrics.update((Sample("escalator_node_group_pods", group, 2.0),), ())
    text = generate_latest(registry).decode()
    assert "escalator_run_count 3.0" in text
    assert "escalator_run_count_total" not in text
    assert 'escalator_node_group_pods{node_group="batch"} 2.0' in text
    assert 'escalator_node_group_scale_lock_duration_count{node_group="batch"} 1.0' in text
