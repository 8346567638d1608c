"""ReportMeta from a scenario: groups and workloads in file order, HPA targets, capacity per pod."""

from __future__ import annotations

from typing import Any

from kubetide.sim.output.scenario_meta import hpa_targets, meta_from_scenario
from kubetide.sim.scenario import parse_scenario


def deployment(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": name, "resources": {"requests": {"cpu": "250m"}}}]},
            },
        },
    }


def hpa(target: str, metrics: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": target},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 2,
            "maxReplicas": 20,
            "metrics": metrics,
        },
    }


CPU_60 = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
}


def test_meta_from_a_scenario() -> None:
    scenario = parse_scenario(
        {
            "apiVersion": "kubetide.io/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "two-apps"},
            "spec": {
                "duration": "2h",
                "seed": 3,
                "nodeGroups": [
                    {"name": "spot", "instanceType": "c5d.large", "minSize": 0, "maxSize": 5},
                    {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10},
                ],
                "objects": [deployment("web"), deployment("api"), hpa("web", [CPU_60])],
                "traffic": [
                    {
                        "target": "Deployment/default/web",
                        "rps": {"type": "constant", "value": 100},
                        "capacityPerPod": 40,
                    }
                ],
            },
        }
    )
    meta = meta_from_scenario(scenario)
    assert (meta.scenario, meta.seed, meta.duration) == ("two-apps", 3, 7200.0)
    assert meta.node_groups == ("spot", "general")
    assert meta.workloads == ("Deployment/default/web", "Deployment/default/api")
    assert meta.cpu_target("Deployment/default/web") == 60
    assert meta.cpu_target("Deployment/default/api") is None
    assert meta.capacity_per_pod == {"Deployment/default/web": 40}
    only_api = meta_from_scenario(scenario, workloads=["Deployment/default/api"])
    assert only_api.workloads == ("Deployment/default/api",) and only_api.capacity_per_pod == {}


def test_hpa_targets_of_each_metric_type() -> None:
    key, found = hpa_targets(
        hpa(
            "web",
            [
                CPU_60,
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "rps"},
                        "target": {"type": "AverageValue", "averageValue": "500m"},
                    },
                },
                {
                    "type": "External",
                    "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "30"}},
                },
            ],
        )
    )
    assert key == "Deployment/default/web"
    assert found == {"cpu_utilization": 60.0, "rps": 0.5, "queue": 30.0}
    v1 = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "w", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "w"}, "targetCPUUtilizationPercentage": 75},
    }
    assert hpa_targets(v1) == ("Deployment/shop/w", {"cpu_utilization": 75.0})
