"""Typed views built from manifests: values, conversions, and errors that name the field path."""

from __future__ import annotations

from typing import Any

import pytest

from kubetide.model.errors import ManifestError
from kubetide.model.fields import Node
from kubetide.model.hpa import HPA
from kubetide.model.pod import Pod
from kubetide.model.resources import Resources


def hpa_manifest(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 10,
        },
    }
    base["spec"].update(spec)
    return base


def test_v2_defaults_min_replicas_and_cpu_metric() -> None:
    hpa = HPA.from_manifest(hpa_manifest())
    assert hpa.min_replicas == 1
    assert [
        (m.type, m.resource, m.target.average_utilization if m.target else None) for m in hpa.metrics
    ] == [("Resource", "cpu", 80)]
    assert hpa.behavior is None


def test_behavior_defaults_per_field() -> None:
    hpa = HPA.from_manifest(hpa_manifest(behavior={"scaleDown": {"selectPolicy": "Min"}}))
    assert (
        hpa.behavior is not None and hpa.behavior.scale_up is not None and hpa.behavior.scale_down is not None
    )
    up, down = hpa.behavior.scale_up, hpa.behavior.scale_down
    assert (up.stabilization_window_seconds, up.select_policy) == (0, "Max")
    assert [(p.type, p.value, p.period_seconds) for p in up.policies or ()] == [
        ("Pods", 4, 15),
        ("Percent", 100, 15),
    ]
    assert (down.stabilization_window_seconds, down.select_policy) == (None, "Min")
    assert [(p.type, p.value, p.period_seconds) for p in down.policies or ()] == [("Percent", 100, 15)]


def test_v1_manifest_converts_to_a_cpu_metric() -> None:
    manifest = hpa_manifest(targetCPUUtilizationPercentage=65)
    manifest["apiVersion"] = "autoscaling/v1"
    hpa = HPA.from_manifest(manifest)
    assert hpa.metrics[0].target is not None and hpa.metrics[0].target.average_utilization == 65


def test_v2beta1_external_average_value_converts() -> None:
    manifest = hpa_manifest(
        metrics=[{"type": "External", "external": {"metricName": "queue", "targetAverageValue": "30"}}]
    )
    manifest["apiVersion"] = "autoscaling/v2beta1"
    metric = HPA.from_manifest(manifest).metrics[0]
    assert metric.metric is not None and metric.metric.name == "queue"
    assert metric.target is not None and metric.target.type == "AverageValue"
    assert metric.target.average_value is not None and metric.target.average_value.milli == 30000


def test_error_names_the_field_path() -> None:
    manifest = hpa_manifest(
        metrics=[
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": "high"}},
            }
        ]
    )
    with pytest.raises(ManifestError) as info:
        HPA.from_manifest(manifest)
    assert str(info.value).startswith(
        "spec.metrics[0].resource.target.averageUtilization: must be an integer"
    )


def test_bad_quantity_in_a_pod_names_the_field_and_quotes_it() -> None:
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"memory": "1Gb"}}}]},
    }
    with pytest.raises(ManifestError) as info:
        Pod.from_manifest(pod)
    assert "spec.containers[0].resources.requests.memory" in str(info.value)
    assert "'1Gb'" in str(info.value)


def test_unknown_fields_are_ignored() -> None:
    hpa = HPA.from_manifest(hpa_manifest(someFutureField={"x": 1}))
    assert hpa.max_replicas == 10


def test_effective_request_with_sidecars_init_and_overhead() -> None:
    pod = Pod.from_manifest(
        {
            "metadata": {"name": "p"},
            "spec": {
                "overhead": {"cpu": "10m"},
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                "initContainers": [
                    {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m"}}},
                    {"name": "migrate", "resources": {"requests": {"cpu": "500m", "memory": "32Mi"}}},
                ],
            },
        }
    )
    # init peak: migrate runs beside the sidecar started before it: 500m + 50m = 550m > 150m.
    assert pod.requests == Resources({"cpu": 560, "memory": 64 * 2**20})


def test_pod_scheduled_false_unschedulable_is_read() -> None:
    pod = Pod.from_manifest(
        {
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c"}]},
            "status": {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/3 nodes are available",
                    }
                ],
            },
        }
    )
    assert pod.unschedulable_message == "0/3 nodes are available"


def test_a_number_no_float_can_hold_is_an_error_naming_its_field() -> None:
    """YAML and JSON read any integer; one past a float's range cannot be computed with (``now -
    float(seconds_ago)`` overflowed: found by tests/commands/test_snapshot_fuzz.py)."""
    node = Node({"seconds_ago": 10**400, "fine": 10**300}, "doc")
    assert node.get("fine").number() == 10**300
    with pytest.raises(ManifestError) as raised:
        node.get("seconds_ago").number()
    assert str(raised.value) == "doc.seconds_ago: must be a finite number, got an integer of 401 digits"


def test_a_time_given_as_a_number_no_float_can_hold_is_an_error_naming_its_field() -> None:
    """Found by tests/commands/test_snapshot_fuzz.py: ``float(10**400)`` raised OverflowError."""
    node = Node({"created": 10**400, "nan": float("nan"), "fine": 1700000000}, "doc")
    assert node.get("fine").time() == 1700000000.0
    with pytest.raises(ManifestError) as raised:
        node.get("created").time()
    assert str(raised.value) == "doc.created: must be a finite number, got an integer of 401 digits"
    with pytest.raises(ManifestError) as raised:
        node.get("nan").time()
    assert str(raised.value) == "doc.nan: must be a finite number, got nan"
