"""CA's Prometheus metrics from a loop's numbers, and kubetide's gauge of kept foreign instances."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from kubetide.cluster.loop.result import LoopMetrics, LoopResult
from kubetide.live.cluster_autoscaler.metrics import CAMetrics
from kubetide.testing.cloud import RecordingCloud


def _value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def test_loop_numbers_become_metrics_and_kept_foreign_instances_go_back_to_zero() -> None:
    registry = CollectorRegistry()
    metrics = CAMetrics(per_nodegroup=True, registry=registry)
    cloud = RecordingCloud().with_group("ng", 0, 5, target=2)
    first = LoopMetrics(
        unschedulable_pods=3,
        nodes_by_state={"ready": 2},
        scaled_down_nodes={"empty": 1},
        kept_foreign_instances={"ng": 1},
    )
    metrics.loop_finished(LoopResult(metrics=first), 100.0, 0.1, cloud)
    assert _value(registry, "cluster_autoscaler_unschedulable_pods_count") == 3
    assert _value(registry, "cluster_autoscaler_nodes_count", state="ready") == 2
    assert _value(registry, "cluster_autoscaler_scaled_down_nodes_total", reason="empty") == 1
    assert _value(registry, "kubetide_cluster_autoscaler_kept_foreign_instances", node_group="ng") == 1
    metrics.loop_finished(LoopResult(metrics=LoopMetrics()), 110.0, 0.1, cloud)
    assert _value(registry, "kubetide_cluster_autoscaler_kept_foreign_instances", node_group="ng") == 0
    assert _value(registry, "cluster_autoscaler_scaled_down_nodes_total", reason="empty") == 1


def test_a_deletions_pass_between_loops_counts_its_nodes_at_once() -> None:
    registry = CollectorRegistry()
    metrics = CAMetrics(per_nodegroup=False, registry=registry)
    metrics.deletions_finished(LoopResult(deleted_between_loops={"underutilized": 1, "empty": 0}), 105.0)
    assert _value(registry, "cluster_autoscaler_scaled_down_nodes_total", reason="underutilized") == 1
    assert _value(registry, "cluster_autoscaler_last_activity", activity="scaleDown") == 105


def test_evictions_are_counted_by_result_from_loops_and_deletion_passes() -> None:
    """CA's ``cluster_autoscaler_evicted_pods_total{eviction_result}``, both series there from the start."""
    registry = CollectorRegistry()
    metrics = CAMetrics(per_nodegroup=False, registry=registry)
    assert _value(registry, "cluster_autoscaler_evicted_pods_total", eviction_result="succeeded") == 0
    assert _value(registry, "cluster_autoscaler_evicted_pods_total", eviction_result="failed") == 0
    loop = LoopMetrics(evicted_pods={"succeeded": 2})
    metrics.loop_finished(LoopResult(metrics=loop), 100.0, 0.1, RecordingCloud())
    metrics.deletions_finished(LoopResult(evicted_between_loops={"succeeded": 1, "failed": 1}), 105.0)
    assert _value(registry, "cluster_autoscaler_evicted_pods_total", eviction_result="succeeded") == 3
    assert _value(registry, "cluster_autoscaler_evicted_pods_total", eviction_result="failed") == 1


def test_function_durations_are_observed_under_cas_labels_and_buckets() -> None:
    registry = CollectorRegistry()
    metrics = CAMetrics(per_nodegroup=False, registry=registry)
    result = LoopResult(
        metrics=LoopMetrics(), function_durations=[("cloudProviderRefresh", 0.02), ("scaleUp", 3.0)]
    )
    metrics.loop_finished(result, 100.0, 4.0, RecordingCloud())
    name = "cluster_autoscaler_function_duration_seconds"
    for function, seconds in (("cloudProviderRefresh", 0.02), ("scaleUp", 3.0), ("main", 4.0)):
        assert _value(registry, f"{name}_count", function=function) == 1
        assert _value(registry, f"{name}_sum", function=function) == seconds
        assert _value(
            registry, "cluster_autoscaler_function_duration_quantile_seconds_count", function=function
        )
    # CA 1.31: prometheus.ExponentialBuckets(0.01, 1.5, 30): 0.01, 0.015, 0.0225, ..., 1278.34
    buckets = [
        s.labels["le"]
        for m in registry.collect()
        if m.name == name
        for s in m.samples
        if s.name.endswith("_bucket") and s.labels["function"] == "main"
    ]
    assert len(buckets) == 31 and buckets[:3] == ["0.01", "0.015", "0.0225"] and buckets[-1] == "+Inf"
    assert float(buckets[-2]) == 0.01 * 1.5**29
