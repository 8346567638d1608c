"""Instances that are not Kubernetes machines are never terminated by surprise (issue 8).

An unregistered instance kubetide launched (it appeared while a scale-up of kubetide's was in flight)
or once saw as a Node is removed after --max-node-provision-time, as CA does. One that was there
before kubetide first looked at the group, or appeared with no scale-up of kubetide's in flight, and
never was a Node, is kept with a Warning event and a metric, unless
--delete-unregistered-foreign-instances; the classification survives a restart (state ConfigMap)."""

from __future__ import annotations

from ca_loop_harness import Harness, node, pod, template

from kubetide.cloud.instance import Instance, InstanceState, InstanceStatus
from kubetide.cluster.clusterstate.persisted import STATE_CONFIG_MAP, decode_state, encode_state
from kubetide.cluster.options import AutoscalingOptions
from kubetide.testing.cloud import Call, RecordingCloud

RUNNING = InstanceStatus(InstanceState.Running)


def group(**flags: object) -> Harness:
    cloud = RecordingCloud().with_group("ng", 1, 10, target=1, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False, **flags}))
    h.add_node(node("n1", "ng"), "ng")
    h.add_pod(pod("busy", 1800, node_name="n1"))
    return h


def kept(h: Harness) -> list[tuple[str, dict[str, object]]]:
    return [(e.type, dict(e.data)) for e in h.events if e.reason == "UnregisteredInstanceKept"]


def test_an_instance_there_before_kubetide_is_kept_reported_once_and_counted() -> None:
    h = group()
    h.cloud.groups["ng"].target = 2
    h.cloud.with_instance("ng", Instance("i-by-hand", RUNNING))
    h.run(0.0)
    for t in (901.0, 911.0, 1800.0):
        result = h.run(t)
    assert h.cloud.calls_to("delete_nodes") == []
    assert kept(h) == [("Warning", {"group": "ng", "instance": "i-by-hand"})]
    assert result.metrics is not None and result.metrics.kept_foreign_instances == {"ng": 1}


def test_the_flag_removes_it_as_cluster_autoscaler_does() -> None:
    h = group(**{"delete-unregistered-foreign-instances": True})
    h.cloud.groups["ng"].target = 2
    h.cloud.with_instance("ng", Instance("i-by-hand", RUNNING))
    h.run(0.0)
    h.run(901.0)
    assert h.cloud.calls_to("delete_nodes") == [Call("delete_nodes", "ng", ("i-by-hand",))] and kept(h) == []


def test_an_instance_added_by_hand_later_is_kept() -> None:
    """No scale-up of kubetide's in flight when it appeared (the seed 002 case: an EC2 instance
    attached to an auto-discovered group by hand)."""
    h = group()
    h.run(0.0)
    h.cloud.groups["ng"].target = 2
    h.cloud.with_instance("ng", Instance("i-by-hand", RUNNING))
    for t in (10.0, 920.0, 930.0):
        h.run(t)
    assert h.cloud.calls_to("delete_nodes") == [] and len(kept(h)) == 1


def test_an_instance_kubetide_launched_that_never_registers_is_removed() -> None:
    h = group()
    h.add_pod(pod("pending", 1500))  # does not fit n1: kubetide scales ng up by one
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "ng", (1,))]
    h.cloud.with_instance("ng", Instance("i-broken", RUNNING))  # launched, its kubelet never registers
    for t in range(10, 960, 10):
        h.run(float(t))
    assert Call("delete_nodes", "ng", ("i-broken",)) in h.cloud.calls_to("delete_nodes")
    assert kept(h) == []


def test_an_instance_the_cloud_reports_out_of_service_is_kept() -> None:
    """Launched by kubetide's scale-up, then put in Standby before its kubelet registered (AWS): the
    cloud says it serves no one, so it is kept where CA terminates it as unregistered."""
    h = group()
    h.add_pod(pod("pending", 1500))
    h.run(0.0)
    h.cloud.with_instance("ng", Instance("i-standby", RUNNING))
    h.run(10.0)
    h.cloud.with_instance("ng", Instance("i-standby", RUNNING, out_of_service=True))
    for t in range(20, 960, 10):
        h.run(float(t))
    assert h.cloud.calls_to("delete_nodes") == []
    assert kept(h) == [("Warning", {"group": "ng", "instance": "i-standby"})]


def test_an_instance_once_seen_as_a_node_is_a_kubernetes_machine() -> None:
    h = group(**{"scale-down-enabled": False})
    h.cloud.groups["ng"].target = 2
    h.add_node(node("n2", "ng"), "ng")
    h.run(0.0)
    del h.nodes["n2"]  # kubectl delete node: the machine keeps running, unregistered
    for t in (10.0, 920.0):
        h.run(t)
    assert h.cloud.calls_to("delete_nodes") == [Call("delete_nodes", "ng", ("n2",))] and kept(h) == []


def test_a_restart_keeps_the_classification() -> None:
    h = group()
    h.cloud.groups["ng"].target = 2
    h.cloud.with_instance("ng", Instance("i-by-hand", RUNNING))
    first = h.run(0.0)
    assert first.state is not None
    state = decode_state(first.state)
    assert state is not None and state.unregistered["i-by-hand"].foreign
    h.config_maps[f"kube-system/{STATE_CONFIG_MAP}"] = dict(encode_state(state))
    h.restart()  # a new process, that reads the state back
    for t in (100.0, 1000.0):
        h.run(t)
    assert h.cloud.calls_to("delete_nodes") == [] and len(kept(h)) == 1


def test_old_state_without_the_field_decodes_as_cluster_autoscaler_would() -> None:
    import json

    doc = {"version": 1, "unregistered": {"i-1": {"group": "ng", "since": 5.0}}}
    state = decode_state({"state": json.dumps(doc)})
    assert state is not None and not state.unregistered["i-1"].foreign
