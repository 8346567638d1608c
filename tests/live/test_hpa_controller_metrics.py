"""kube-controller-manager's HPA metrics from the driver's results: action only for a scale write that
succeeded, error ``spec`` for the HPA's own fault, ``internal`` for anything else, one duration each."""

from __future__ import annotations

import itertools

from prometheus_client import CollectorRegistry

from hpa.test_driver import Events, Source, Worlds, in_ns, kubetide_hpa
from hpa.world import World
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver
from kubetide.live.hpa.controller_metrics import HPAControllerMetrics
from kubetide.model.errors import ManifestError

NS = "horizontal_pod_autoscaler_controller"


def _value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(f"{NS}_{name}", labels) or 0.0


def test_each_reconcile_is_counted_and_timed_with_upstreams_labels() -> None:
    worlds = {
        "up": World(replicas=2, usage_per_pod=900),
        "steady": World(replicas=2, usage_per_pod=500),
        "conflict": World(replicas=2, usage_per_pod=900),
        "badmin": World(replicas=2, usage_per_pod=900),
        "badwrite": World(replicas=2, usage_per_pod=500),
    }
    ports, source, events = Worlds(**worlds), Source(), Events()
    ports.failing_updates.add("conflict")
    source.failing_writes.add("badwrite/web")
    for ns in ("up", "steady", "conflict", "missing", "badwrite"):
        source.add(in_ns(ns))
    source.add(kubetide_hpa("badmin", minReplicas=0))
    source.hpas["broken/web"] = ManifestError.at("spec.syncPeriod", "invalid duration '1x'")
    clock = itertools.count(0.0, 0.25)  # each reconcile takes 0.25 s by this timer
    driver = HPADriver(source, ports, ports, events, HPAConfig(), timer=lambda: next(clock))
    registry = CollectorRegistry()
    metrics = HPAControllerMetrics(registry)
    done = driver.tick(0.0)
    assert all(s.seconds == 0.25 for s in done)
    metrics.observe(done)
    # A scale-down needs a second reconcile (the first recommendation is the current count).
    down_ports, down_source = Worlds(down=World(replicas=6, usage_per_pod=100)), Source()
    down_source.add(in_ns("down"))
    down = HPADriver(
        down_source,
        down_ports,
        down_ports,
        Events(),
        HPAConfig(downscale_stabilization=0.0),
        timer=lambda: 0.0,
    )
    down.tick(0.0)
    metrics.observe(down.tick(15.0))

    def count(action: str, error: str) -> float:
        return _value(registry, "reconciliations_total", action=action, error=error)

    assert count("scale_up", "none") == 1  # up
    assert count("scale_down", "none") == 1  # down, its second reconcile: no stabilization window
    assert count("none", "none") == 1  # steady
    assert count("none", "internal") == 3  # conflict (scale write failed), missing target, status write
    assert count("none", "spec") == 2  # minReplicas 0 without Object/External; the object does not parse
    assert _value(registry, "reconciliation_duration_seconds_count", action="none", error="internal") == 3
    assert _value(registry, "reconciliation_duration_seconds_sum", action="scale_up", error="none") == 0.25
    computed = {"scale_up": 0.0, "scale_down": 0.0, "none": 0.0}
    for action in computed:
        computed[action] = _value(
            registry, "metric_computation_total", action=action, error="none", metric_type="Resource"
        )
    # up and conflict propose more, down proposes fewer, steady and badwrite stay (badmin stops first).
    assert computed == {"scale_up": 2.0, "scale_down": 1.0, "none": 2.0}


def test_without_a_timer_durations_are_zero() -> None:
    ports, source, events = Worlds(a=World(replicas=2, usage_per_pod=500)), Source(), Events()
    source.add(in_ns("a"))
    (synced,) = HPADriver(source, ports, ports, events, HPAConfig()).tick(0.0)
    assert synced.seconds == 0.0
