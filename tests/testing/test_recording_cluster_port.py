"""The recording cluster port: writes applied to what it holds, as the API server would; every call
recorded; failures on request; and, discarding, a port that holds nothing and accepts every write."""

from __future__ import annotations

import pytest

from kubetide.model.api import ApiError, ClusterPort, EvictionOutcome, NotFoundError
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import PortCall, RecordingClusterPort

TAINT = Taint("ToBeDeletedByClusterAutoscaler", "10", "NoSchedule")


def test_it_implements_every_cluster_port_method() -> None:
    wanted = {name for name in vars(ClusterPort) if not name.startswith("_")}
    assert wanted and wanted <= set(dir(RecordingClusterPort))


def test_writes_change_what_it_holds_and_a_node_it_does_not_hold_is_not_found() -> None:
    nodes = {"n1": NodeView("n1", taints=(Taint(TAINT.key, "1", "NoSchedule"),))}
    port = RecordingClusterPort(nodes)
    port.add_node_taint("n1", TAINT)  # same key and effect: replaced
    port.set_node_unschedulable("n1", True)
    port.annotate_node("n1", {"a": "b"})
    assert nodes["n1"].taints == (TAINT,) and nodes["n1"].unschedulable  # the dict given is the one held
    assert nodes["n1"].annotations == {"a": "b"}
    with pytest.raises(NotFoundError):
        port.remove_node_taint("gone", TAINT.key)
    port.delete_node("n1")
    port.delete_node("n1")  # deletion is idempotent
    assert nodes == {}
    assert [c.method for c in port.calls][-3:] == ["remove_node_taint", "delete_node", "delete_node"]


def test_injected_failures_are_recorded_not_made_and_run_out() -> None:
    port = RecordingClusterPort([NodeView("n1"), NodeView("n2")]).with_failure(
        "add_node_taint", "n1", times=1
    )
    with pytest.raises(ApiError):
        port.add_node_taint("n1", TAINT)
    port.add_node_taint("n1", TAINT)
    port.add_node_taint("n2", TAINT)
    assert port.calls_to("add_node_taint") == [
        PortCall("add_node_taint", "n1", (TAINT,)),
        PortCall("add_node_taint", "n1", (TAINT,)),
        PortCall("add_node_taint", "n2", (TAINT,)),
    ]
    assert [entry[1] for entry in port.log] == ["n1", "n2"]  # past the failure only
    port.with_failure("delete_node", error=NotFoundError("gone"))
    with pytest.raises(NotFoundError):
        port.delete_node("n2")
    assert "n2" in port.nodes


def test_evictions_by_outcome_and_a_graceful_pod_goes_when_its_time_comes() -> None:
    pods = [Pod(name="a", namespace="web"), Pod(name="b", namespace="web"), Pod(name="c", namespace="web")]
    port = RecordingClusterPort(pods=pods, graceful=True)
    port.refuse_pods.add("c")
    assert port.evict(pods[0], 0) is EvictionOutcome.EVICTED and "a" not in port.pods  # no grace: at once
    assert port.evict(pods[1], 30) is EvictionOutcome.EVICTED and port.pods["b"].deletion_time == 30.0
    assert port.evict(pods[2]) is EvictionOutcome.REFUSED
    assert port.evict(Pod(name="x", namespace="web")) is EvictionOutcome.GONE
    port.advance(30.0)
    assert set(port.pods) == {"c"} and port.evicted == ["a", "b"]
    assert port.grace_periods == [("a", 0), ("b", 30)]


def test_events_config_maps_and_the_clouds_writes_in_one_log() -> None:
    port = RecordingClusterPort([NodeView("n1", provider_id="n1")])
    cloud = port.logging_cloud(
        RecordingCloud().with_group("g", 0, 3, 1).with_node("g", NodeView("n1", provider_id="n1"))
    )
    port.add_node_taint("n1", TAINT)
    cloud.node_groups()[0].increase_size(1)
    port.emit_event("Normal", "ScaleDown", "Node/n1", "marked the node as toBeDeleted/unschedulable")
    port.write_config_map("kube-system", "state", {"state": "{}"})
    assert [entry[0] for entry in port.log] == ["add_node_taint", "increase_size", "write_config_map"]
    assert [(e.type, e.reason, e.object) for e in port.events] == [("Normal", "ScaleDown", "Node/n1")]
    assert port.config_maps == {("kube-system", "state"): {"state": "{}"}}


def test_a_discarding_port_accepts_every_write_and_evictions_find_the_pod_gone() -> None:
    port = RecordingClusterPort.discarding()
    port.add_node_taint("anywhere", TAINT)
    port.remove_node_taint("anywhere", TAINT.key)
    port.annotate_node("anywhere", {"a": None})
    assert port.evict(Pod(name="p", namespace="web"), 30) is EvictionOutcome.GONE
    assert port.nodes == {} and [c.method for c in port.calls] == [
        "add_node_taint",
        "remove_node_taint",
        "annotate_node",
        "evict",
    ]
