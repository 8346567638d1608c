"""The real HorizontalController inside the simulation, fed by the simulated metrics pipeline."""

from __future__ import annotations

from typing import Any

from kubetide.hpa.config import HPAConfig
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.sim.hpa import SimHPA
from kubetide.sim.metrics import Load, MetricFeed, MetricsPipeline
from kubetide.sim.scenario.series_spec import ConstantSeries, StepSeries
from kubetide.sim.series import compile_series

from .builders import add_ready_node, cluster, deployment, node


def hpa(target: int = 50, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": target},
                    },
                }
            ],
            **spec,
        },
    }


def test_hpa_scales_a_deployment_with_its_traffic() -> None:
    engine, c, events = cluster()
    for i in range(4):
        add_ready_node(c, node(f"n{i}", cpu=4000))
    c.apply(deployment("web", 2), 0.0)
    c.apply(hpa(50), 0.0)
    rps = compile_series(
        StepSeries.model_validate(
            {"type": "step", "steps": [{"at": 0, "value": 100}, {"at": 600, "value": 400}]}
        )
    )
    # 100 rps x 4m = 400m over 2 pods = 200m each = 40% of 500m; at 400 rps: 1600m -> 4 pods at 80%.
    metrics = MetricsPipeline(c, [Load("Deployment/default/web", rps, 4.0, 0, None, None)], window=30.0)
    engine.every(15.0, metrics.scrape, phase=0.0, priority=10)
    runner = SimHPA(engine, c, metrics, HPAConfig(), events)
    runner.start(phase=1.0)
    engine.run(590.0)
    assert c.workloads["Deployment/default/web"].pods and len(c.workloads["Deployment/default/web"].pods) == 2
    engine.run(700.0)
    web = c.workloads["Deployment/default/web"]
    # 1600m needed at 50% of 500m per pod: 7 pods (ceil(1.6 x 2 / 0.5 ...)) reached in steps.
    assert len(web.pods) >= 6
    rescales = [e for e in events.items if e[2] == "SuccessfulRescale"]
    assert rescales and rescales[0][4].startswith("New size: ")
    assert rescales[0][5]["from"] == 2
    status = c.hpas["HorizontalPodAutoscaler/default/web"].status
    assert status.current_replicas >= 2 and any(cond.type == "ScalingActive" for cond in status.conditions)


def test_a_workload_applied_again_after_a_delete_is_not_served_from_the_old_ones_caches() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=8000))
    c.apply(deployment("web", 2), 0.0)
    metrics = MetricsPipeline(c, [], window=30.0)
    runner = SimHPA(engine, c, metrics, HPAConfig(), _NoEvents())
    engine.run(60.0)
    old = c.workloads["Deployment/default/web"]
    old_names = {p.name for p in old.pods.values()}
    metrics.scrape(60.0)
    selector = old.selector
    assert {p.name for p in runner.targets.list_pods("default", selector)} == old_names
    c.delete("Deployment/default/web", 60.0)
    c.apply(deployment("web", 2), 60.0)
    engine.run(120.0)
    new = c.workloads["Deployment/default/web"]
    new.version = old.version  # the same key and version: only the object tells them apart
    new_names = {p.name for p in new.pods.values()}
    assert new_names.isdisjoint(old_names)
    metrics.scrape(120.0)
    assert set(metrics.resource_metrics("default", selector, "cpu", "")) == new_names
    assert {p.name for p in runner.targets.list_pods("default", selector)} == new_names


class _NoEvents:
    def emit(self, *args: Any, **kwargs: Any) -> None:
        pass


def test_object_metrics_of_the_same_name_belong_to_their_own_objects() -> None:
    _, c, _ = cluster()

    def constant(value: float) -> Any:
        return compile_series(ConstantSeries.model_validate({"type": "constant", "value": value}))

    loads = [
        Load(
            f"Deployment/default/{name}",
            constant(rps),
            0.0,
            0,
            None,
            None,
            (MetricFeed("hits", "Object", {}, None, f"Deployment/default/{name}"),),
        )
        for name, rps in (("a", 10.0), ("b", 20.0))
    ]
    metrics = MetricsPipeline(c, loads, window=30.0)
    metrics.scrape(0.0)
    for name, expected in (("a", 10_000), ("b", 20_000)):
        ref = CrossVersionObjectReference("Deployment", name, "apps/v1")
        assert metrics.object_metric("default", "hits", ref, None) == expected


def test_the_kubetide_hpa_sync_period_is_honoured_in_the_simulation() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=8000))
    for name in ("a", "b"):
        c.apply(deployment(name, 2), 0.0)
        manifest = hpa(50)
        manifest["metadata"]["name"] = name
        manifest["spec"]["scaleTargetRef"]["name"] = name
        if name == "a":
            manifest["apiVersion"] = "autoscaling.kubetide.io/v1"
            manifest["spec"]["syncPeriod"] = "30s"
        c.apply(manifest, 0.0)
    metrics = MetricsPipeline(c, [], window=30.0)
    runner = SimHPA(engine, c, metrics, HPAConfig(), _NoEvents())
    seen: list[tuple[str, float]] = []
    sync = runner.driver.sync

    def recording(item: Any, now: float) -> Any:
        seen.append((item.name, now))
        return sync(item, now)

    runner.driver.sync = recording  # type: ignore[method-assign]
    runner.start(phase=1.0)
    engine.run(100.0)
    assert [t for name, t in seen if name == "b"] == [1.0, 16.0, 31.0, 46.0, 61.0, 76.0, 91.0]
    assert [t for name, t in seen if name == "a"] == [1.0, 31.0, 61.0, 91.0]
