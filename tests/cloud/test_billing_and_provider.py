"""Billing, the provider-level lookups, the template the groups claim, determinism, the deleteNode action."""

from __future__ import annotations

import pytest

from kubetide.cloud import CloudProviderError, InstanceState, NotImplementedByProvider
from kubetide.cloud.provider import CloudProvider, NodeGroupAutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources

from .builders import fake_node, group, world

M5_LARGE = 0.096


def test_initial_nodes_are_billed_from_zero() -> None:
    w = world(group(initialSize=2))
    w.run(3600)
    seconds, cost = w.cloud.billing(3600)["ng"]
    assert seconds == 7200 and cost == pytest.approx(2 * M5_LARGE)
    assert w.cloud.cost_per_hour() == pytest.approx(2 * M5_LARGE)


def test_billing_runs_from_running_to_terminated() -> None:
    w = world(group(pricePerHour=3.6), termination_delay=30)
    w.ng().increase_size(1)  # requested at 0, running at 60
    w.run(59)
    assert w.cloud.billing(59)["ng"] == (0.0, 0.0) and w.cloud.cost_per_hour() == 0
    w.run(1000)
    assert w.cloud.cost_per_hour() == pytest.approx(3.6)
    w.ng().delete_nodes([w.listener.nodes["ng-1"]])  # terminated at 1030: still billed while deleting
    w.run(5000)
    seconds, cost = w.cloud.billing(5000)["ng"]
    assert seconds == pytest.approx(970.0) and cost == pytest.approx(0.97)
    assert w.cloud.cost_per_hour() == 0


def test_billing_per_group_uses_its_price() -> None:
    w = world(group("a", initialSize=1), group("b", instanceType="p3.2xlarge", initialSize=1))
    bill = w.cloud.billing(1800)
    assert bill["a"][1] == pytest.approx(M5_LARGE / 2) and bill["b"][1] == pytest.approx(3.06 / 2)


def test_same_seed_same_run_and_names_do_not_depend_on_the_seed() -> None:
    def run(seed: int) -> tuple[list[str], list[tuple[float, str, str]]]:
        w = world(group(initialSize=1), group("b"), seed=seed)
        w.ng().increase_size(2)
        w.ng("b").increase_size(1)
        w.run(500)
        ids = [i.id for g in w.cloud.node_groups() for i in g.nodes()]
        return ids, [(e.t, e.reason, e.obj) for e in w.listener.events]

    assert run(3) == run(3)
    assert run(3)[0] != run(4)[0]
    w = world(group(initialSize=3), seed=9)
    assert sorted(w.listener.nodes) == ["ng-1", "ng-2", "ng-3"]
    ids = [i.id for i in w.ng().nodes()]
    assert len(set(ids)) == 3


def test_node_group_for_node_and_has_instance() -> None:
    w = world(group("a", initialSize=1), group("b", initialSize=1))
    node = w.listener.nodes["b-1"]
    found = w.cloud.node_group_for_node(node)
    assert found is not None and found.id() == "b"
    assert w.cloud.has_instance(node)
    assert w.cloud.node_group_for_node(NodeView("other", provider_id="aws:///x/i-1")) is None
    assert not w.cloud.has_instance(NodeView("gone", provider_id="sim:///us-east-1a/i-000"))
    w.ng("b").delete_nodes([node])
    assert w.cloud.has_instance(node)  # still deleting
    w.run(100)
    assert not w.cloud.has_instance(node) and w.cloud.node_group_for_node(node) is None


def test_template_is_what_the_provider_claims_not_the_real_machine() -> None:
    w = world(group(minSize=0, template={"allocatable": {"memory": "4Gi"}}, labels={"pool": "x"}))
    template = w.ng().template_node_info()
    assert template.node.allocatable["memory"] == 4 * 2**30
    assert template.node.capacity["memory"] == 8 * 2**30
    assert template.node.labels["pool"] == "x" and template.pods == ()
    w.ng().increase_size(1)
    w.run(100)
    assert w.listener.nodes["ng-1"].allocatable["memory"] == 8 * 2**30


def test_static_groups_and_the_provider_basics() -> None:
    w = world()
    cloud: CloudProvider = w.cloud
    assert cloud.name() == "sim"
    (ng,) = cloud.node_groups()
    assert (ng.id(), ng.min_size(), ng.max_size(), ng.exist(), ng.autoprovisioned()) == (
        "ng",
        0,
        10,
        True,
        False,
    )
    defaults = NodeGroupAutoscalingOptions(0.5, 0.5, 600, 1200, 900)
    assert ng.get_options(defaults) is None
    with pytest.raises(NotImplementedByProvider):
        ng.create()
    cloud.refresh()
    cloud.cleanup()
    assert "target: 0" in ng.debug()


def test_start_is_once_only() -> None:
    w = world()
    with pytest.raises(RuntimeError):
        w.cloud.start()


def test_delete_node_objects_keeps_the_machine_running_unregistered() -> None:
    w = world(group(initialSize=3), seed=5)
    w.run(100)
    (name,) = w.cloud.delete_node_objects("ng", 1)
    assert name not in w.listener.nodes and len(w.listener.nodes) == 2
    assert [i.status.state for i in w.ng().nodes()] == [InstanceState.Running] * 3
    assert w.listener.of("InstanceTerminated") == []
    w.run(5000)
    assert name not in w.listener.nodes  # it never registers again
    pid = next(i.id for i in w.ng().nodes() if i.id not in {n.provider_id for n in w.listener.nodes.values()})
    w.ng().delete_nodes([fake_node(pid)])
    w.run(6000)  # terminating it does not delete the Node twice (the listener would fail)
    assert len(w.listener.of("InstanceTerminated")) == 1


def test_delete_node_objects_before_ready_cancels_the_ready_flip() -> None:
    w = world()
    w.ng().increase_size(1)
    w.run(80)  # registered at 75, Ready due at 85
    assert w.cloud.delete_node_objects("ng", 5) == ["ng-1"]
    w.run(1000)
    assert w.listener.of("NodeReady") == []


def test_client_handles_share_the_cloud() -> None:
    w = world()
    ca = w.cloud.client("cluster-autoscaler")
    ca.node_group("ng").increase_size(2)
    assert w.cloud.target_sizes() == {"ng": 2}
    with pytest.raises(CloudProviderError):
        ca.node_group("ng").decrease_target_size(-1)


def test_pricing_for_the_price_expander() -> None:
    w = world(group("a", initialSize=1), group("b", instanceType="p3.2xlarge"))
    pricing = w.cloud.pricing()
    assert pricing.node_price(w.listener.nodes["a-1"], 0, 3600) == pytest.approx(M5_LARGE)
    template = w.ng("b").template_node_info().node
    assert pricing.node_price(template, 0, 1800) == pytest.approx(3.06 / 2)
    by_type = NodeView("copy", labels={"node.kubernetes.io/instance-type": "m5.large"})
    assert pricing.node_price(by_type, 0, 3600) == pytest.approx(M5_LARGE)
    with pytest.raises(CloudProviderError, match="no price"):
        pricing.node_price(NodeView("elsewhere"), 0, 3600)
    pod = Pod("p", containers=(Container("c", requests=Resources({"cpu": 2000, "memory": 4 * 2**30})),))
    assert pricing.pod_price(pod, 0, 7200) == pytest.approx(2 * (2 * 0.033174 + 4 * 0.004446))
