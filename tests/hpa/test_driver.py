"""The HPA loop: due times per HPA, acting through the ports, and one HPA's failure staying its own."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver, StatusWriteError
from kubetide.hpa.ports import PodMetric, Scale, ScaleError
from kubetide.hpa.state import HPAState, Recommendation
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, CrossVersionObjectReference, HPAStatus
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

from .world import ResourceMetricsOnly, World, hpa


class Worlds(ResourceMetricsOnly):
    """One World per namespace (so selectors never overlap), behind both controller ports."""

    def __init__(self, **worlds: World) -> None:
        self.worlds = worlds
        self.broken_metrics: set[str] = set()  # namespaces whose metrics raise something unexpected
        self.failing_updates: set[str] = set()

    def _world(self, namespace: str) -> World:
        if namespace not in self.worlds:
            raise ScaleError(f'deployments.apps "web" not found in {namespace}')
        return self.worlds[namespace]

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        return self._world(namespace).get_scale(namespace, ref)

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        if namespace in self.failing_updates:
            raise ScaleError("conflict")
        self._world(namespace).update_scale(namespace, ref, replicas)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self._world(namespace).list_pods(namespace, selector)

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        if namespace in self.broken_metrics:
            raise RuntimeError("metrics adapter bug")
        return self._world(namespace).resource_metrics(namespace, selector, resource, container)


@dataclass
class Source:
    hpas: dict[str, HPA | ManifestError] = field(default_factory=dict)
    failing_writes: set[str] = field(default_factory=set)
    writes: list[tuple[str, HPAStatus]] = field(default_factory=list)

    def add(self, item: HPA) -> HPA:
        self.hpas[item.key] = item
        return item

    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        return dict(self.hpas)

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        if hpa.key in self.failing_writes:
            raise StatusWriteError("the object has been modified")
        self.writes.append((hpa.key, status))
        self.hpas[hpa.key] = hpa.with_status(status)


@dataclass
class Events:
    items: list[tuple[str, str, str, str]] = field(default_factory=list)

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.items.append((type_, reason, obj, message))

    def reasons(self, obj: str) -> list[str]:
        return [reason for _, reason, o, _ in self.items if o == obj]


def in_ns(namespace: str, **kwargs: Any) -> HPA:
    return dataclasses.replace(hpa(**kwargs), namespace=namespace)


def kubetide_hpa(namespace: str, **spec: Any) -> HPA:
    return HPA.from_manifest(
        {
            "apiVersion": "autoscaling.kubetide.io/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 20,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 50},
                        },
                    }
                ],
                **spec,
            },
        }
    )


def setup(**worlds: World) -> tuple[Worlds, Source, Events, HPADriver]:
    ports, source, events = Worlds(**worlds), Source(), Events()
    return ports, source, events, HPADriver(source, ports, ports, events, HPAConfig(sync_period=15.0))


def test_each_hpa_is_reconciled_once_per_period_and_its_writes_go_through_the_ports() -> None:
    ports, source, events, driver = setup(a=World(replicas=2, usage_per_pod=900))
    source.add(in_ns("a"))
    assert [s.key for s in driver.tick(0.0)] == ["a/web"]
    assert ports.worlds["a"].replicas == 4
    assert events.reasons("HorizontalPodAutoscaler/a/web") == ["SuccessfulRescale"]
    assert source.hpas["a/web"].status.desired_replicas == 4  # type: ignore[union-attr]
    assert driver.tick(5.0) == () and driver.tick(14.0) == ()
    assert [s.key for s in driver.tick(15.0)] == ["a/web"]
    assert driver.next_due("a/web") == 30.0


def test_spec_sync_period_of_the_kubetide_resource_replaces_the_flag() -> None:
    _, source, _, driver = setup(a=World(replicas=2), b=World(replicas=2))
    source.add(kubetide_hpa("a", syncPeriod="1m"))
    source.add(in_ns("b"))
    assert [s.key for s in driver.tick(0.0)] == ["a/web", "b/web"]
    assert [s.key for s in driver.tick(15.0)] == ["b/web"]
    assert [s.key for s in driver.tick(60.0)] == ["a/web", "b/web"]


def test_a_status_that_did_not_change_is_not_written_again() -> None:
    _, source, _, driver = setup(a=World(replicas=2, usage_per_pod=500))
    source.add(in_ns("a"))
    first = driver.tick(0.0)
    assert first[0].status_written
    again = driver.tick(15.0)
    assert not again[0].status_written and again[0].problem is None
    assert len(source.writes) == 1


def test_one_hpa_failing_in_any_way_never_stops_the_others() -> None:
    worlds = {ns: World(replicas=2, usage_per_pod=900) for ns in ("b", "c", "d", "e")}
    ports, source, events, driver = setup(**worlds)
    ports.broken_metrics.add("c")
    ports.failing_updates.add("d")
    source.failing_writes.add("e/web")
    for ns in ("a", "b", "c", "d", "e"):  # a: no target at all
        source.add(in_ns(ns))
    source.hpas["f/web"] = ManifestError.at("spec.syncPeriod", "invalid duration '1x'")
    done = {s.key: s for s in driver.tick(0.0)}
    assert set(done) == {"a/web", "b/web", "c/web", "d/web", "e/web", "f/web"}

    def reasons(ns: str) -> list[str]:
        return events.reasons(f"HorizontalPodAutoscaler/{ns}/web")

    assert reasons("a") == ["FailedGetScale"]
    assert reasons("b") == ["SuccessfulRescale"] and worlds["b"].replicas == 4
    assert reasons("c") == ["FailedReconcile"]
    active = done["c/web"].result.status.condition("ScalingActive")  # type: ignore[union-attr]
    assert active is not None and (active.status, active.reason) == ("False", "FailedReconcile")
    assert "RuntimeError: metrics adapter bug" in active.message
    assert reasons("d") == ["FailedRescale"] and worlds["d"].replicas == 2
    assert reasons("e") == ["SuccessfulRescale", "FailedUpdateStatus"]
    assert done["e/web"].problem == "failed to update status for e/web: the object has been modified"
    assert reasons("f") == ["InvalidSpec"] and done["f/web"].result is None
    assert worlds["e"].replicas == 4


def test_a_deleted_hpa_is_forgotten() -> None:
    _, source, _, driver = setup(a=World(replicas=2))
    source.add(in_ns("a"))
    driver.tick(0.0)
    assert driver.controller.state("a/web").recommendations
    del source.hpas["a/web"]
    assert driver.tick(15.0) == ()
    assert driver.next_due("a/web") is None
    assert driver.controller.state("a/web").recommendations is None


def test_restart_forgets_recommendations_and_scale_events() -> None:
    world = World(replicas=6, usage_per_pod=100)
    _, source, _, driver = setup(a=world)
    source.add(in_ns("a"))
    driver.tick(0.0)  # a new HPA: its first recommendation is the current count, so no scale-down yet
    driver.restart()
    assert driver.controller.state("a/web").recommendations is None
    assert driver.next_due("a/web") is None
    world.now = 400.0
    driver.tick(400.0)  # a restarted controller waits a whole stabilization window again
    assert world.replicas == 6
    world.now = 701.0
    driver.tick(701.0)
    assert world.replicas == 2


def test_min_replicas_zero_without_object_or_external_metric_is_refused_with_a_condition() -> None:
    world = World(replicas=2, usage_per_pod=900)
    _, source, events, driver = setup(a=world)
    source.add(kubetide_hpa("a", minReplicas=0))
    done = driver.tick(0.0)
    assert world.replicas == 2
    assert events.reasons("HorizontalPodAutoscaler/a/web") == ["InvalidMinReplicas"]
    status = done[0].result.status  # type: ignore[union-attr]
    active = status.condition("ScalingActive")
    assert active is not None and (active.status, active.reason) == ("False", "InvalidMinReplicas")
    assert events.items[0][0] == "Warning" and "Object or External" in events.items[0][3]


def test_a_standard_hpa_with_min_replicas_zero_is_left_to_the_api_server() -> None:
    world = World(replicas=2, usage_per_pod=900)
    _, source, events, driver = setup(a=world)
    source.add(in_ns("a", min_replicas=0))
    driver.tick(0.0)
    assert events.reasons("HorizontalPodAutoscaler/a/web") == ["SuccessfulRescale"]


# --- shadow mode -------------------------------------------------------------------------------------


def shadow_setup(**worlds: World) -> tuple[Worlds, Source, Events, HPADriver]:
    ports, source, events = Worlds(**worlds), Source(), Events()
    driver = HPADriver(source, ports, ports, events, HPAConfig(sync_period=15.0), shadow=True)
    return ports, source, events, driver


def test_a_shadow_decides_every_hpa_and_writes_no_scale_status_or_event() -> None:
    ports, source, events, driver = shadow_setup(a=World(replicas=2, usage_per_pod=900), b=World(replicas=3))
    ports.failing_updates.add("a")  # a write would fail: the shadow makes none
    source.add(in_ns("a"))
    source.add(in_ns("b"))
    done = {s.key: s for s in driver.tick(0.0)}
    assert set(done) == {"a/web", "b/web"}
    a = done["a/web"]
    assert a.result is not None and a.result.scaled and a.result.desired_replicas == 4
    assert [e.reason for e in a.result.events] == ["SuccessfulRescale"]  # would-be Events, in the result
    assert a.decision is not None and a.decision.rescale and not a.status_written
    assert ports.worlds["a"].replicas == 2 and ports.worlds["a"].writes == []
    assert source.writes == [] and events.items == []
    assert [r.replicas for r in driver.controller.state("a/web").recommendations or []] == [2, 4]


def test_a_shadow_remembers_its_own_decisions_as_if_it_had_acted() -> None:
    """Pods +1 per minute: the shadow decided 2 -> 3 and nobody acted, so the cluster is still at 2.
    Its memory holds its own +1, so 15 s later the policy allows it nothing more (2 - 1 + 1 = 2), where
    a controller that had not decided the +1 would ask for 3 again."""
    behavior = {"scaleUp": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}  # fmt: skip
    ports, source, _, driver = shadow_setup(a=World(replicas=2, usage_per_pod=900))
    source.add(in_ns("a", behavior=behavior))
    (first,) = driver.tick(0.0)
    assert first.result is not None and first.result.desired_replicas == 3
    (second,) = driver.tick(15.0)
    assert second.result is not None and not second.result.scaled
    assert second.result.normalization is not None
    assert second.result.normalization.limit_reason == "ScaleUpLimit"
    # Its view of the HPA is the status it would have written, not the one in the cluster.
    assert second.decision is not None and second.decision.hpa.status == first.result.status
    assert source.hpas["a/web"].status.desired_replicas == 0  # type: ignore[union-attr]
    fresh = HPADriver(source, ports, ports, Events(), HPAConfig(sync_period=15.0), shadow=True)
    (again,) = fresh.tick(15.0)
    assert again.result is not None and again.result.desired_replicas == 3


def test_a_shadow_cannot_take_the_quiet_lane() -> None:
    ports, source, events = Worlds(), Source(), Events()
    with pytest.raises(ValueError, match="shadow"):
        HPADriver(source, ports, ports, events, shadow=True, quiet_lane=True)


# --- restored memory ---------------------------------------------------------------------------------


def held_high() -> HPAState:
    """A memory that recommended 6 replicas 100 s ago (at t=300): a scale-down stays held."""
    return HPAState([Recommendation(6, 200.0)])


def test_restored_memory_goes_to_the_hpa_of_the_same_uid_at_the_next_tick() -> None:
    world = World(replicas=6, usage_per_pod=100)
    _, source, _, driver = setup(a=world, b=World(replicas=6, usage_per_pod=100))
    source.add(dataclasses.replace(in_ns("a"), uid="uid-a"))
    source.add(dataclasses.replace(in_ns("b"), uid="uid-b2"))  # deleted and created again
    driver.restore("a/web", "uid-a", held_high())
    driver.restore("b/web", "uid-b1", held_high())
    driver.restore("c/web", "uid-c", held_high())  # not listed: dropped
    done = {s.key: s for s in driver.tick(300.0)}
    a, b = done["a/web"].result, done["b/web"].result
    assert a is not None and not a.scaled and a.normalization is not None and a.normalization.stabilized == 6
    assert done["a/web"].decision is not None
    assert done["a/web"].decision.remembered.recommendations == (Recommendation(6, 200.0),)
    # b's memory was another HPA's: b starts as a controller that just started (its current count).
    assert b is not None and not b.scaled and done["b/web"].decision is not None
    assert done["b/web"].decision.remembered.recommendations is None
    source.add(dataclasses.replace(in_ns("c"), uid="uid-c"))
    (c,) = [s for s in driver.tick(315.0) if s.key == "c/web"]
    assert c.decision is not None and c.decision.remembered.recommendations is None


def test_restored_memory_never_replaces_what_the_driver_remembers_itself() -> None:
    world = World(replicas=6, usage_per_pod=100)
    _, source, _, driver = setup(a=world)
    source.add(dataclasses.replace(in_ns("a"), uid="uid-a"))
    driver.tick(0.0)
    own = driver.controller.memory("a/web")
    driver.restore("a/web", "uid-a", held_high())
    driver.tick(15.0)
    assert driver.controller.memory("a/web") is own
