"""Loading valid scenarios: defaults, the catalog, resolved node groups, files on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scenario_builders import deployment, doc, load

from kubetide.model.resources import CPU, MEMORY, PODS
from kubetide.sim.scenario import BUILTIN_CATALOG, load_scenario, resolve_node_group
from kubetide.sim.scenario.catalog import GPU_RESOURCE
from kubetide.sim.scenario.checks import unimplemented_autoscalers

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenario-minimal.yaml"


def test_example_scenario_is_valid() -> None:
    scenario = load_scenario(EXAMPLE)
    assert scenario.name == "minimal"
    assert scenario.spec.duration == 6 * 3600
    assert [g.name for g in scenario.spec.nodeGroups] == ["general", "spot-a"]


def test_defaults_follow_the_contract() -> None:
    spec = load(doc()).spec
    group = spec.nodeGroups[1]
    assert group.initial_size == group.minSize == 0
    assert (group.provisioning.delay, group.provisioning.registerDelay, group.provisioning.readyDelay) == (
        60,
        15,
        10,
    )
    assert (spec.metrics.resolution, spec.metrics.window) == (15, 30)
    hpa = spec.autoscalers.hpa
    assert (hpa.syncPeriod, hpa.tolerance, hpa.downscaleStabilization) == (15, 0.1, 300)
    assert (hpa.cpuInitializationPeriod, hpa.initialReadinessDelay) == (300, 30)
    assert hpa.is_enabled(has_hpa_objects=True) and not hpa.is_enabled(has_hpa_objects=False)
    ca = spec.autoscalers.clusterAutoscaler
    assert ca is not None and ca.enabled
    assert ca.flag("scan-interval") == 10 and ca.flag("max-node-provision-time") == 900
    assert spec.autoscalers.escalator is None


def test_seed_defaults_to_zero() -> None:
    data = doc()
    del data["spec"]["seed"]
    assert load(data).spec.seed == 0


@pytest.mark.parametrize(
    ("name", "cpu", "memory_gib", "pods", "gpu"),
    [
        ("m5.large", 2, 8, 29, 0),
        ("m5.xlarge", 4, 16, 58, 0),
        ("m5.2xlarge", 8, 32, 58, 0),
        ("c5.xlarge", 4, 8, 58, 0),
        ("c5d.large", 2, 4, 29, 0),
        ("r5.large", 2, 16, 29, 0),
        ("r5.xlarge", 4, 32, 58, 0),
        ("p3.2xlarge", 8, 61, 58, 1),
        ("n2-standard-4", 4, 16, 110, 0),
        ("e2-standard-8", 8, 32, 110, 0),
    ],
)
def test_catalog_has_published_values(name: str, cpu: int, memory_gib: int, pods: int, gpu: int) -> None:
    entry = BUILTIN_CATALOG[name]
    assert (entry.cpu, entry.memory, entry.pods, entry.gpu) == (str(cpu), f"{memory_gib}Gi", pods, gpu)
    assert entry.price_per_hour > 0


def test_instance_types_add_and_override_fields() -> None:
    data = doc(
        instanceTypes={
            "big.custom": {"cpu": "16", "memory": "64Gi", "pricePerHour": 0.77},
            "m5.large": {"pricePerHour": 0.05},
        }
    )
    catalog = load(data).catalog
    assert catalog["big.custom"].cpu == "16" and catalog["big.custom"].pods == 110
    assert catalog["m5.large"].price_per_hour == 0.05 and catalog["m5.large"].memory == "8Gi"


def test_resolved_group_merges_catalog_capacity_allocatable_and_template() -> None:
    data = doc()
    data["spec"]["nodeGroups"][1].update(
        capacity={"memory": "16Gi"},
        allocatable={"cpu": "1930m"},
        template={"allocatable": {"memory": "4Gi"}},
        zone="us-east-1b",
    )
    scenario = load(data)
    group = resolve_node_group(scenario.spec.nodeGroups[1], scenario.catalog)
    assert group.capacity[CPU] == 2000 and group.capacity[MEMORY] == 16 * 2**30 and group.capacity[PODS] == 29
    assert group.allocatable[CPU] == 1930 and group.allocatable[MEMORY] == 16 * 2**30
    assert group.template_allocatable[MEMORY] == 4 * 2**30  # what the provider claims, not reality
    assert group.labels["topology.kubernetes.io/zone"] == "us-east-1b"
    assert group.labels["node.kubernetes.io/instance-type"] == "c5d.large"
    assert group.price_per_hour == BUILTIN_CATALOG["c5d.large"].price_per_hour


def test_gpu_types_resolve_to_nvidia_gpus() -> None:
    data = doc()
    data["spec"]["nodeGroups"][0]["instanceType"] = "p3.2xlarge"
    scenario = load(data)
    assert resolve_node_group(scenario.spec.nodeGroups[0], scenario.catalog).capacity[GPU_RESOURCE] == 1


def test_capacity_alone_defines_a_custom_group() -> None:
    data = doc()
    data["spec"]["nodeGroups"][0] = {
        "name": "raw",
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": 50},
        "minSize": 0,
        "maxSize": 3,
    }
    scenario = load(data)
    group = resolve_node_group(scenario.spec.nodeGroups[0], scenario.catalog)
    assert group.template_allocatable == group.capacity and group.price_per_hour == 0.0


def test_json_files_load(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc()))
    assert load_scenario(path).name == "test"


def test_actions_may_reference_objects_applied_earlier() -> None:
    data = doc(
        actions=[
            {"at": "1h", "apply": deployment("batch", replicas=0)},
            {"at": "2h", "scale": {"target": "Deployment/default/batch", "replicas": 40}},
            {"at": "3h", "delete": "Deployment/batch"},
        ]
    )
    actions = load(data).spec.actions
    assert [a.kind for a in actions] == ["apply", "scale", "delete"]
    assert actions[2].delete == "Deployment/default/batch"  # Kind/name means the default namespace


def test_every_fault_type_loads() -> None:
    data = doc()
    data["spec"]["nodeGroups"][0]["faults"] = [
        {"type": "stockout"},
        {"type": "apiError", "at": "1h", "until": "2h"},
        {"type": "unregistered", "count": 2},
        {"type": "missingProviderID", "count": 1},
        {"type": "nodeNotReady", "at": "3h", "count": 1},
    ]
    faults = load(data).spec.nodeGroups[0].faults
    assert [f.type for f in faults] == [
        "stockout",
        "apiError",
        "unregistered",
        "missingProviderID",
        "nodeNotReady",
    ]
    assert faults[0].mode == "silent" and faults[0].until is None


def test_enabled_autoscalers_and_the_not_implemented_report() -> None:
    data = doc(autoscalers={"clusterAutoscaler": {}, "escalator": {"enabled": False}})
    scenario = load(data)
    assert scenario.enabled_autoscalers() == ("cluster-autoscaler",)  # no HPA object: no HPA
    assert unimplemented_autoscalers(scenario, {"cluster-autoscaler"}) == []
    (problem,) = unimplemented_autoscalers(scenario, set())
    assert (
        str(problem)
        == "spec.autoscalers.clusterAutoscaler: cluster-autoscaler is not implemented in the simulator yet"
    )
