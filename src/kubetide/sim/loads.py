"""From the scenario's ``traffic`` entries to the metrics pipeline's :class:`Load` per workload."""

from __future__ import annotations

from kubetide.sim.metrics import Load, MetricFeed
from kubetide.sim.scenario.model import Scenario
from kubetide.sim.scenario.series_spec import ConstantSeries
from kubetide.sim.series import Series, compile_series

_NO_REQUESTS = ConstantSeries(type="constant", value=0.0)


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
        per_pod: dict[str, Series] = {}
        for name in ("cpu", "memory"):
            spec = getattr(traffic.perPod, name) if traffic.perPod is not None else None
            if spec is not None:
                key = f"{at}.perPod.{name}"
                per_pod[name] = compile_series(spec, base_dir=scenario.base_dir, seed=seed, key=key)
        rps = traffic.rps if traffic.rps is not None else _NO_REQUESTS
        loads.append(
            Load(
                traffic.target,
                compile_series(rps, base_dir=scenario.base_dir, seed=seed, key=f"{at}.rps"),
                float(traffic.cpuPerRequest.amount * 1000) if traffic.cpuPerRequest is not None else 0.0,
                traffic.baseCpu.milli if traffic.baseCpu is not None else 0,
                traffic.memoryPerPod.value if traffic.memoryPerPod is not None else None,
                traffic.capacityPerPod,
                feeds,
                per_pod.get("cpu"),
                per_pod.get("memory"),
            )
        )
    return loads
