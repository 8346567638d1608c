"""The live ClusterPort: optimistic-concurrency taints, evictions by outcome, Events; and behind the
guard (kubetide.live.guard) in a dry run."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY

from kubetide.kube.discovery import ServedVersions
from kubetide.kube.events import EventRecorder
from kubetide.live.actuation import KubeClusterPort
from kubetide.live.guard import GuardedClusterPort, WriteGate
from kubetide.model.api import ApiError, EvictionOutcome, NotFoundError
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.apiserver import FakeApi, obj, status

NODE = "/api/v1/nodes/n1"
EVICT = "/api/v1/namespaces/web/pods/p1/eviction"
TO_BE_DELETED = Taint("ToBeDeletedByClusterAutoscaler", "1700000000", "NoSchedule")
OTHER = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


def _node(rv: str, *taints: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return 200, obj("n1", rv, spec={"taints": list(taints)})


def _port(api: FakeApi, clock: Any = None) -> KubeClusterPort:
    rest = api.rest()
    events = EventRecorder(
        rest, "cluster-autoscaler", host="h", sleep=lambda s: None, clock=clock or (lambda: 0.0)
    )
    return KubeClusterPort(
        rest,
        ServedVersions("v2beta2", "v1beta1"),
        component="cluster-autoscaler",
        events=events,
        sleep=lambda s: None,
    )


def _dry_run(api: FakeApi) -> GuardedClusterPort:
    """The live port as a dry run wires it: behind the guard, leading."""
    return GuardedClusterPort(_port(api), WriteGate("cluster-autoscaler", lambda: True, dry_run=True))


def test_add_taint_retries_a_conflict_on_a_fresh_read_and_keeps_other_controllers_taints() -> None:
    api = FakeApi()
    api.add("GET", NODE, _node("1"), _node("2", OTHER))
    api.add("PUT", NODE, status(409, "Conflict"), (200, {}))
    _port(api).add_node_taint("n1", TO_BE_DELETED)
    puts = api.bodies("PUT", NODE)
    assert len(puts) == 2
    assert puts[1]["metadata"]["resourceVersion"] == "2"
    assert puts[1]["spec"]["taints"] == [OTHER, TO_BE_DELETED.to_manifest()]


def test_add_taint_replaces_same_key_and_effect_and_remove_keeps_the_others() -> None:
    old = {"key": TO_BE_DELETED.key, "value": "1", "effect": "NoSchedule"}
    api = FakeApi().add("GET", NODE, _node("1", old, OTHER)).add("PUT", NODE, (200, {}))
    port = _port(api)
    port.add_node_taint("n1", TO_BE_DELETED)
    port.remove_node_taint("n1", TO_BE_DELETED.key)
    first, second = api.bodies("PUT", NODE)
    assert first["spec"]["taints"] == [OTHER, TO_BE_DELETED.to_manifest()]
    assert second["spec"]["taints"] == [OTHER]


def test_nothing_to_change_writes_nothing_and_conflicts_that_recur_are_an_api_error() -> None:
    api = FakeApi().add("GET", NODE, _node("1", OTHER))
    _port(api).remove_node_taint("n1", "absent")
    assert api.bodies("PUT", NODE) == []
    api.add("PUT", NODE, status(409, "Conflict"))
    with pytest.raises(ApiError):
        _port(api).set_node_unschedulable("n1", True)


def test_missing_node_is_not_found_but_deleting_it_succeeds() -> None:
    api = FakeApi().add("GET", NODE, status(404, "NotFound")).add("DELETE", NODE, status(404, "NotFound"))
    with pytest.raises(NotFoundError):
        _port(api).add_node_taint("n1", TO_BE_DELETED)
    _port(api).delete_node("n1")


def test_annotate_is_a_merge_patch_of_the_given_keys() -> None:
    api = FakeApi().add("PATCH", NODE, (200, {}))
    _port(api).annotate_node("n1", {"a": "1", "b": None})
    assert api.bodies("PATCH", NODE) == [{"metadata": {"annotations": {"a": "1", "b": None}}}]
    assert api.requests[0].headers["Content-Type"] == "application/merge-patch+json"


POD = Pod("p1", "web")


@pytest.mark.parametrize(
    ("answers", "outcome"),
    [
        ([(201, {})], EvictionOutcome.EVICTED),
        ([status(429, "TooManyRequests")], EvictionOutcome.REFUSED),
        ([status(404, "NotFound")], EvictionOutcome.GONE),
        ([status(503, "ServiceUnavailable"), (201, {})], EvictionOutcome.EVICTED),
    ],
)
def test_eviction_outcomes(answers: list[Any], outcome: EvictionOutcome) -> None:
    api = FakeApi().add("POST", EVICT, *answers)
    assert _port(api).evict(POD) is outcome
    assert api.bodies("POST", EVICT)[0]["apiVersion"] == "policy/v1beta1"


def test_an_eviction_carries_cas_grace_period_in_its_delete_options() -> None:
    """drain.go evictPod: ``DeleteOptions{GracePeriodSeconds: &termination}``; without one the API
    server uses the pod's own terminationGracePeriodSeconds."""
    api = FakeApi().add("POST", EVICT, (201, {}), (201, {}))
    port = _port(api)
    assert port.evict(POD, 45) is EvictionOutcome.EVICTED
    assert port.evict(POD) is EvictionOutcome.EVICTED
    with_grace, without = api.bodies("POST", EVICT)
    assert with_grace["deleteOptions"] == {"gracePeriodSeconds": 45}
    assert with_grace["metadata"] == {"name": "p1", "namespace": "web"}
    assert "deleteOptions" not in without


def test_eviction_failing_after_retries_is_an_api_error() -> None:
    api = FakeApi().add("POST", EVICT, status(500, "InternalError"))
    with pytest.raises(ApiError):
        _port(api).evict(POD)
    assert len(api.requests) == 5


def _dry_count(action: str) -> float:
    value = REGISTRY.get_sample_value(
        "kubetide_dry_run_actions_total", {"component": "cluster-autoscaler", "action": action}
    )
    return value or 0.0


def test_dry_run_writes_nothing_but_events_and_counts_each_action() -> None:
    api = FakeApi().add("GET", NODE, _node("1")).add("POST", "/api/v1/namespaces/default/events", (201, {}))
    before = _dry_count("add-taint"), _dry_count("evict"), _dry_count("delete-node")
    port = _dry_run(api)
    port.add_node_taint("n1", TO_BE_DELETED)
    assert port.evict(POD, 30) is EvictionOutcome.GONE  # as if gone at once: the drain shows its end
    port.delete_node("n1")
    port.emit_event("Normal", "ScaleDown", "Node/n1", "marking node for deletion")
    assert {r.method for r in api.requests} == {"POST"}  # the guard says the writes: nothing is read
    assert [r.url.path for r in api.requests if r.method == "POST"] == ["/api/v1/namespaces/default/events"]
    after = _dry_count("add-taint"), _dry_count("evict"), _dry_count("delete-node")
    assert [a - b for a, b in zip(after, before, strict=True)] == [1, 1, 1]


def test_events_aggregate_within_ten_minutes_by_patching_the_count() -> None:
    now = [1000.0]
    events = "/api/v1/namespaces/web/events"
    api = FakeApi().add("POST", events, (201, {}))
    rest = api.rest()
    recorder = EventRecorder(
        rest,
        "cluster-autoscaler",
        host="h",
        clock=lambda: now[0],
        sleep=lambda s: None,
        uid_of=lambda kind, ns, name: "uid-p1",
    )
    recorder.emit("Normal", "TriggeredScaleUp", "Pod/web/p1", "pod triggered scale-up")
    created = api.bodies("POST", events)[0]
    assert created["involvedObject"] == {
        "kind": "Pod",
        "name": "p1",
        "apiVersion": "v1",
        "namespace": "web",
        "uid": "uid-p1",
    }
    assert created["count"] == 1 and created["source"] == {"component": "cluster-autoscaler", "host": "h"}
    assert created["firstTimestamp"] == "1970-01-01T00:16:40Z"
    path = f"{events}/{created['metadata']['name']}"
    api.add("PATCH", path, (200, {}))
    now[0] += 300
    recorder.emit("Normal", "TriggeredScaleUp", "Pod/web/p1", "pod triggered scale-up")
    assert api.bodies("PATCH", path) == [
        {"count": 2, "lastTimestamp": "1970-01-01T00:21:40Z", "message": "pod triggered scale-up"}
    ]
    now[0] += 601
    recorder.emit("Normal", "TriggeredScaleUp", "Pod/web/p1", "pod triggered scale-up")
    assert len(api.bodies("POST", events)) == 2


def test_an_event_that_cannot_be_written_is_dropped_silently() -> None:
    api = FakeApi().add("POST", "/api/v1/namespaces/default/events", status(403, "Forbidden"))
    _port(api).emit_event("Warning", "ScaleDownFailed", "Node/n1", "failed")
    _port(api).emit_event("Warning", "X", "not a reference", "m")


def test_an_object_named_kind_version_group_gets_that_api_version_and_its_own_uid() -> None:
    # A standard HPA beside a kubetide HPA of the same name: the Event on the standard one must name
    # autoscaling/v2beta2 and its uid, or `kubectl describe hpa` never shows it.
    events = "/api/v1/namespaces/web/events"
    api = FakeApi().add("POST", events, (201, {}), (201, {}))
    uids = {"HorizontalPodAutoscaler": "uid-own", "HorizontalPodAutoscaler.v2beta2.autoscaling": "uid-std"}
    recorder = EventRecorder(
        api.rest(),
        "horizontal-pod-autoscaler",
        host="h",
        sleep=lambda s: None,
        uid_of=lambda kind, ns, name: uids.get(kind),
        api_versions={"HorizontalPodAutoscaler": "autoscaling.kubetide.io/v1"},
    )
    recorder.emit("Warning", "ConflictingHPA", "HorizontalPodAutoscaler/web/web", "both")
    recorder.emit("Warning", "ConflictingHPA", "HorizontalPodAutoscaler.v2beta2.autoscaling/web/web", "both")
    own, standard = (b["involvedObject"] for b in api.bodies("POST", events))
    assert own == {
        "kind": "HorizontalPodAutoscaler",
        "name": "web",
        "apiVersion": "autoscaling.kubetide.io/v1",
        "namespace": "web",
        "uid": "uid-own",
    }
    assert standard == {
        "kind": "HorizontalPodAutoscaler",
        "name": "web",
        "apiVersion": "autoscaling/v2beta2",
        "namespace": "web",
        "uid": "uid-std",
    }


STATE_CM = "/api/v1/namespaces/kube-system/configmaps/kubetide-cluster-autoscaler-state"


def test_the_state_config_map_is_created_then_replaced_and_never_written_in_a_dry_run() -> None:
    api = FakeApi()
    api.add("GET", STATE_CM, status(404, "NotFound"), (200, obj("kubetide-cluster-autoscaler-state", "7")))
    api.add("POST", "/api/v1/namespaces/kube-system/configmaps", (201, {}))
    api.add("PUT", STATE_CM, (200, {}))
    port = _port(api)
    port.write_config_map("kube-system", "kubetide-cluster-autoscaler-state", {"state": "{}"})
    port.write_config_map("kube-system", "kubetide-cluster-autoscaler-state", {"state": "{1}"})
    (created,) = api.bodies("POST", "/api/v1/namespaces/kube-system/configmaps")
    assert created["metadata"]["name"] == "kubetide-cluster-autoscaler-state" and created["data"] == {
        "state": "{}"
    }
    (replaced,) = api.bodies("PUT", STATE_CM)
    assert replaced["metadata"]["resourceVersion"] == "7" and replaced["data"] == {"state": "{1}"}
    dry = FakeApi()
    _dry_run(dry).write_config_map("kube-system", "kubetide-cluster-autoscaler-state", {"state": "{}"})
    assert dry.bodies("POST", "/api/v1/namespaces/kube-system/configmaps") == []
