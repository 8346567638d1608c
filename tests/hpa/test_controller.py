"""HorizontalController behaviour a user relies on: events, conditions, memory across syncs."""

from __future__ import annotations

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.ports import ScaleError
from kubetide.model.hpa import HPA, CrossVersionObjectReference

from .world import World, hpa


def conditions(result: object) -> dict[str, tuple[str, str]]:
    status = result.status  # type: ignore[attr-defined]
    return {c.type: (c.status, c.reason) for c in status.conditions}


def test_scale_up_emits_successful_rescale_with_upstream_message() -> None:
    world = World(replicas=2, usage_per_pod=900)
    result = HorizontalController(world, world).reconcile(hpa(utilization=50), 0.0)
    assert result.scaled and world.replicas == 4  # 90% / 50% x 2 = 3.6 -> 4
    assert [(e.type, e.reason, e.message) for e in result.events] == [
        (
            "Normal",
            "SuccessfulRescale",
            "New size: 4; reason: cpu resource utilization (percentage of request) above target",
        )
    ]
    assert conditions(result) == {
        "AbleToScale": ("True", "SucceededRescale"),
        "ScalingActive": ("True", "ValidMetricFound"),
        "ScalingLimited": ("False", "DesiredWithinRange"),
        # HPAScaleToZero is on by default: every rescale states whether it scaled to zero.
        "ScaledToZero": ("False", "NotScaledToZero"),
    }
    assert result.status.current_metrics[0]["resource"]["current"]["averageUtilization"] == 90
    assert result.status.last_scale_time == 0.0


def test_new_hpa_waits_one_stabilization_window_before_scaling_down() -> None:
    world = World(replicas=6, usage_per_pod=100)
    controller = HorizontalController(world, world, HPAConfig(downscale_stabilization=300))
    target = hpa(utilization=50)
    first = controller.reconcile(target, 0.0)
    assert not first.scaled and conditions(first)["AbleToScale"] == ("True", "ScaleDownStabilized")
    world.now = 300.0
    assert not controller.reconcile(target, 300.0).scaled  # age 300 <= window: still counts
    world.now = 301.0
    result = controller.reconcile(target, 301.0)
    assert result.scaled and world.replicas == 2  # 10% / 50% x 6 = 1.2 -> 2


def test_a_restarted_controller_forgets_and_waits_again() -> None:
    world = World(replicas=6, usage_per_pod=100)
    target = hpa(utilization=50)
    HorizontalController(world, world).reconcile(target, 0.0)
    restarted = HorizontalController(world, world)
    assert not restarted.reconcile(target, 400.0).scaled


def test_no_behavior_scale_up_is_capped_at_twice_current_or_four() -> None:
    world = World(replicas=3, usage_per_pod=5000)
    result = HorizontalController(world, world).reconcile(hpa(max_replicas=100, utilization=50), 0.0)
    assert world.replicas == 6
    assert conditions(result)["ScalingLimited"] == ("True", "ScaleUpLimit")


def test_replicas_above_max_are_corrected_without_metrics() -> None:
    world = World(replicas=30)
    result = HorizontalController(world, world).reconcile(hpa(max_replicas=10), 0.0)
    assert world.replicas == 10
    assert (
        result.events[0].message == "New size: 10; reason: Current number of replicas above Spec.MaxReplicas"
    )
    assert "ScalingActive" not in conditions(result)


def test_zero_replicas_disables_scaling() -> None:
    world = World(replicas=0)
    result = HorizontalController(world, world).reconcile(hpa(), 0.0)
    assert not result.scaled and result.desired_replicas == 0
    assert conditions(result)["ScalingActive"] == ("False", "ScalingDisabled")


def test_unreadable_scale_reports_failed_get_scale() -> None:
    class Broken(World):
        def get_scale(self, namespace: str, ref: CrossVersionObjectReference):  # type: ignore[no-untyped-def]
            raise ScaleError('deployments.apps "web" not found')

    world = Broken(replicas=2)
    target = hpa()
    result = HorizontalController(world, world).reconcile(target, 0.0)
    assert result.error is not None and not result.scaled
    assert conditions(result) == {"AbleToScale": ("False", "FailedGetScale")}
    assert result.events[0].reason == "FailedGetScale"
    assert result.status.desired_replicas == target.status.desired_replicas


def test_condition_keeps_its_transition_time_until_status_flips() -> None:
    world = World(replicas=2, usage_per_pod=500)
    controller = HorizontalController(world, world)
    target = hpa(utilization=50)
    first = controller.reconcile(target, 0.0)
    second = controller.reconcile(target.with_status(first.status), 15.0)
    active = next(c for c in second.status.conditions if c.type == "ScalingActive")
    assert active.last_transition_time == 0.0
    assert [c.type for c in second.status.conditions] == [c.type for c in first.status.conditions]


def test_two_hpas_on_the_same_pods_are_ambiguous() -> None:
    world = World(replicas=2, usage_per_pod=900)
    controller = HorizontalController(world, world)
    a = hpa()
    b = hpa().__class__(**{**hpa().__dict__, "name": "other"})
    controller.register(b)
    controller.reconcile(b, 0.0)
    result = controller.reconcile(a, 0.0)
    assert conditions(result)["ScalingActive"] == ("False", "AmbiguousSelector")
    assert not result.scaled


def kubetide_hpa(min_replicas: int, metrics: list[dict[str, object]] | None = None) -> HPA:
    spec: dict[str, object] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": min_replicas,
        "maxReplicas": 20,
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
        "metrics": metrics
        or [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
            }
        ],
    }
    return HPA.from_manifest(
        {
            "apiVersion": "autoscaling.kubetide.io/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": spec,
        }
    )


def test_a_kubetide_hpa_has_upstreams_condition_types_unless_it_scales_to_zero() -> None:
    """kubectl describe khpa reads as kubectl describe hpa: AbleToScale, ScalingActive, ScalingLimited;
    ScaledToZero only on an HPA that uses scale to zero (minReplicas 0), whatever the gate."""
    world = World(replicas=2, usage_per_pod=900)
    result = HorizontalController(world, world).reconcile(kubetide_hpa(1), 0.0)
    assert result.scaled
    assert set(conditions(result)) == {"AbleToScale", "ScalingActive", "ScalingLimited"}
    # An External metric of 0 against a target of 10 with minReplicas 0: scaled to zero, and said so.
    world = Zeroing(replicas=2, usage_per_pod=900)
    external = [
        {
            "type": "External",
            "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "10"}},
        }
    ]
    result = HorizontalController(world, world).reconcile(kubetide_hpa(0, external), 0.0)
    assert result.scaled and world.replicas == 0
    assert conditions(result)["ScaledToZero"] == ("True", "ScaledToZero")


class Zeroing(World):
    """A world whose external metric (a queue) is empty."""

    def external_metric(self, *args: object) -> list[int]:
        return [0]
