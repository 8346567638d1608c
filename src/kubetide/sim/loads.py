"""From the scenario's ``traffic`` entries to the metrics pipeline's :class:`Load` per workload."""

from __future__ import annotations

from kubetide.sim.metrics import Load, MetricFeed
from kubetide.sim.scenario.model import Scenario
from kubetide.sim.series import compile_series


def build_loads(scenario: Scenario, seed: int) -> list[Load]:
    loads = []
    for i, traffic in enumerate(scenario.spec.traffic):
        at = f"spec.traffic[{i}]"
        feeds = tuple(
            MetricFeed(
                feed.name,
                feed.kind,
                dict(feed.selector),
                compile_series(feed.series, base_dir=scenario.base_dir, seed=seed, key=f"{at}.metrics[{j}]")
                if feed.series is not None
                else None,
                feed.describedObject or traffic.target,
            )
            for j, feed in enumerate(traffic.metrics)
        )
        loads.append(
            Load(
                traffic.target,
                compile_series(traffic.rps, base_dir=scenario.base_dir, seed=seed, key=f"{at}.rps"),
                float(traffic.cpuPerRequest.amount * 1000) if traffic.cpuPerRequest is not None else 0.0,
                traffic.baseCpu.milli if traffic.baseCpu is not None else 0,
                traffic.memoryPerPod.value if traffic.memoryPerPod is not None else None,
                traffic.capacityPerPod,
                feeds,
            )
        )
    return loads
