"""An instance's life: requested (Creating) → running → Node registered → Ready → deleted → terminated."""

from __future__ import annotations

import pytest

from kubetide.cloud import CloudProviderError, InstanceState
from kubetide.model.node import HOSTNAME_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL

from .builders import fake_node, group, world


def test_initial_nodes_exist_registered_and_ready_at_zero() -> None:
    w = world(group(minSize=1, initialSize=2))
    assert w.ng().target_size() == 2
    assert [i.status.state for i in w.ng().nodes()] == [InstanceState.Running] * 2
    assert w.listener.ready_nodes() == ["ng-1", "ng-2"]
    assert w.listener.reasons() == ["NodeRegistered", "NodeReady", "NodeRegistered", "NodeReady"]
    assert {e.t for e in w.listener.events} == {0.0}


def test_increase_size_lists_creating_instances_at_once() -> None:
    w = world()
    w.ng().increase_size(2)
    assert w.ng().target_size() == 2
    instances = w.ng().nodes()
    assert [i.status.state for i in instances] == [InstanceState.Creating] * 2
    assert all(i.status.error_info is None for i in instances)
    assert all(i.id.startswith("sim:///us-east-1a/i-") for i in instances)
    assert w.listener.events == []


def test_each_step_happens_after_its_delay() -> None:
    w = world(group(provisioning={"delay": "90s", "registerDelay": "20s", "readyDelay": "10s"}))
    w.run(5)
    w.ng().increase_size(1)
    (pid,) = [i.id for i in w.ng().nodes()]
    w.run(94.9)
    assert w.listener.events == []
    w.run(95)
    assert w.listener.reasons() == ["InstanceCreated"]
    assert w.ng().nodes()[0].status.state is InstanceState.Running
    w.run(115)
    assert w.listener.reasons()[-1] == "NodeRegistered"
    node = w.listener.nodes["ng-1"]
    assert not node.ready and node.provider_id == pid and node.creation_time == 115
    assert not w.listener.ready["ng-1"]
    w.run(125)
    assert w.listener.reasons() == ["InstanceCreated", "NodeRegistered", "NodeReady"]
    assert w.listener.ready_nodes() == ["ng-1"]
    assert [e.t for e in w.listener.events] == [95, 115, 125]


def test_registered_node_has_the_real_machine_and_the_usual_labels() -> None:
    g = group(
        labels={"team": "a"},
        taints=[{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}],
        allocatable={"memory": "7Gi"},
        zone="us-east-1b",
    )
    w = world(g)
    w.ng().increase_size(1)
    w.run(100)
    node = w.listener.nodes["ng-1"]
    assert node.labels[HOSTNAME_LABEL] == "ng-1"
    assert node.labels[INSTANCE_TYPE_LABEL] == "m5.large"
    assert node.labels[ZONE_LABEL] == "us-east-1b"
    assert node.labels["team"] == "a"
    assert node.labels["kubetide.io/node-group"] == "ng"
    assert node.capacity["cpu"] == 2000 and node.capacity["memory"] == 8 * 2**30
    assert node.allocatable["memory"] == 7 * 2**30
    assert [(t.key, t.value, t.effect) for t in node.taints] == [("dedicated", "batch", "NoSchedule")]
    assert node.provider_id.startswith("sim:///us-east-1b/i-")
    addresses = {a.type: a.address for a in w.listener.addresses["ng-1"]}
    assert addresses == {"InternalIP": "10.0.0.1", "Hostname": "ng-1"}


def test_events_carry_group_instance_and_node() -> None:
    w = world()
    w.ng().increase_size(1)
    w.run(100)
    pid = w.ng().nodes()[0].id
    created, registered, ready = w.listener.events
    assert created.source == "cloud" and created.data == {"group": "ng", "instance": pid}
    assert created.obj.startswith("Instance/i-")
    assert registered.source == "kubelet" and registered.data == {
        "group": "ng",
        "node": "ng-1",
        "instance": pid,
    }
    assert registered.obj == "Node/ng-1"
    assert ready.message == "Node ng-1 status is now: NodeReady"


def test_delete_nodes_lowers_target_then_terminates() -> None:
    w = world(group(initialSize=3))
    node = w.listener.nodes["ng-2"]
    w.run(10)
    w.cloud.client("cluster-autoscaler").node_group("ng").delete_nodes([node])
    assert w.ng().target_size() == 2
    states = {i.id: i.status.state for i in w.ng().nodes()}
    assert states[node.provider_id] is InstanceState.Deleting
    w.run(39.9)
    assert "ng-2" in w.listener.nodes
    w.run(40)
    assert "ng-2" not in w.listener.nodes
    assert node.provider_id not in {i.id for i in w.ng().nodes()}
    (terminated,) = w.listener.of("InstanceTerminated")
    assert terminated.t == 40
    assert terminated.data == {"group": "ng", "instance": node.provider_id, "reason": "cluster-autoscaler"}


def test_delete_nodes_refuses_below_min_and_deletes_nothing() -> None:
    w = world(group(minSize=2, initialSize=3))
    nodes = [w.listener.nodes["ng-1"], w.listener.nodes["ng-2"]]
    with pytest.raises(CloudProviderError, match="min size reached"):
        w.ng().delete_nodes(nodes)
    assert w.ng().target_size() == 3
    assert all(i.status.state is InstanceState.Running for i in w.ng().nodes())


def test_force_delete_goes_below_min_but_the_group_replaces_the_machine() -> None:
    w = world(group(minSize=1, initialSize=1))
    w.ng().force_delete_nodes([w.listener.nodes["ng-1"]])
    assert w.ng().target_size() == 1
    states = sorted(i.status.state for i in w.ng().nodes())
    assert states == [InstanceState.Creating, InstanceState.Deleting]
    w.run(200)
    assert w.listener.ready_nodes() == ["ng-2"]


def test_delete_nodes_of_another_group_is_an_error() -> None:
    w = world(group("a", initialSize=1), group("b", initialSize=1))
    with pytest.raises(CloudProviderError, match="not an instance of group b"):
        w.ng("b").delete_nodes([w.listener.nodes["a-1"]])
    assert w.ng("a").target_size() == 1


def test_deleting_twice_is_a_no_op() -> None:
    w = world(group(initialSize=2))
    node = w.listener.nodes["ng-1"]
    w.ng().delete_nodes([node])
    w.ng().delete_nodes([node])
    assert w.ng().target_size() == 1
    w.run(100)
    assert len(w.listener.of("InstanceTerminated")) == 1


def test_deleting_an_instance_still_creating_cancels_it() -> None:
    w = world()
    w.ng().increase_size(1)
    (inst,) = w.ng().nodes()
    w.run(30)
    w.ng().delete_nodes([fake_node(inst.id)])
    w.run(1000)
    assert w.listener.reasons() == ["InstanceTerminated"]
    assert w.ng().nodes() == [] and w.ng().target_size() == 0
    assert w.cloud.billing(1000)["ng"] == (0.0, 0.0)


def test_increase_size_checks_delta_and_max() -> None:
    w = world(group(maxSize=3))
    with pytest.raises(CloudProviderError, match="must be positive"):
        w.ng().increase_size(0)
    with pytest.raises(CloudProviderError, match="too large - desired:4 max:3"):
        w.ng().increase_size(4)
    w.ng().atomic_increase_size(3)
    assert w.ng().target_size() == 3


def test_decrease_target_size_never_deletes_existing_instances() -> None:
    w = world(group(initialSize=1))
    w.ng().increase_size(2)
    with pytest.raises(CloudProviderError, match="attempt to delete existing nodes"):
        w.ng().decrease_target_size(-1)
    with pytest.raises(CloudProviderError, match="must be negative"):
        w.ng().decrease_target_size(0)
    assert w.ng().target_size() == 3
