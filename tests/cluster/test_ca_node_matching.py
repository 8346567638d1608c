"""Nodes without spec.providerID are matched to instances by the addresses the cloud reports (issue 8)."""

from __future__ import annotations

from kubetide.cloud.instance import Instance
from kubetide.cluster.clusterstate.matching import match_nodes_without_provider_id
from kubetide.model.node import NodeView


def test_a_node_without_provider_id_takes_the_id_of_the_one_instance_reporting_its_address() -> None:
    nodes = [
        NodeView("a", provider_id="cloud://i-a", addresses=("10.0.0.1",)),
        NodeView("b", addresses=("10.0.0.2", "b.internal")),
    ]
    instances = {
        "g": [
            Instance("cloud://i-a", addresses=("10.0.0.1",)),
            Instance("cloud://i-b", addresses=("10.0.0.2",)),
        ]
    }
    m = match_nodes_without_provider_id(nodes, instances)
    assert [n.provider_id for n in m.nodes] == ["cloud://i-a", "cloud://i-b"]
    (match,) = m.matched
    assert (match.node, match.group, match.instance, match.address) == ("b", "g", "cloud://i-b", "10.0.0.2")
    assert m.unidentified == ()


def test_the_node_name_matches_a_reported_host_name() -> None:
    m = match_nodes_without_provider_id(
        [NodeView("ip-10-0-0-2")], {"g": [Instance("i-b", addresses=("ip-10-0-0-2",))]}
    )
    assert m.nodes[0].provider_id == "i-b"


def test_no_match_or_an_ambiguous_one_leaves_the_node_unidentified() -> None:
    instances = {"g": [Instance("i-1", addresses=("h",)), Instance("i-2", addresses=("h",))]}
    m = match_nodes_without_provider_id([NodeView("h"), NodeView("other")], instances)
    assert [n.name for n in m.unidentified] == ["h", "other"]
    assert all(n.provider_id == "" for n in m.nodes)


def test_an_instance_claimed_by_providerid_is_not_matched_again() -> None:
    nodes = [NodeView("a", provider_id="i-1"), NodeView("b", addresses=("10.0.0.1",))]
    m = match_nodes_without_provider_id(nodes, {"g": [Instance("i-1", addresses=("10.0.0.1",))]})
    assert [n.name for n in m.unidentified] == ["b"]


def test_a_ready_node_matching_no_instance_keeps_long_unregistered_instances() -> None:
    from ca_loop_harness import Harness, node, pod, template

    from kubetide.cloud.instance import InstanceState, InstanceStatus
    from kubetide.cluster.options import AutoscalingOptions
    from kubetide.testing.cloud import RecordingCloud

    cloud = RecordingCloud().with_group("g", 1, 10, target=2, template=template("g"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"delete-unregistered-foreign-instances": True}))
    h.add_node(node("g-1", "g"), "g")
    h.add_pod(pod("busy", 1800, node_name="g-1"))
    h.cloud.with_instance("g", Instance("i-lost", InstanceStatus(InstanceState.Running)))
    h.nodes["stray"] = NodeView("stray")  # Ready, no providerID, addresses the cloud does not report
    h.run(0.0)
    result = h.run(901.0)
    assert h.cloud.calls_to("delete_nodes") == []
    warnings = [e for e in h.events if e.reason == "NodeWithoutProviderID"]
    assert [(e.object, e.type) for e in warnings] == [("Node/stray", "Warning")] * 2  # every 5 min
    assert "DeleteUnregistered" not in h.reasons(result)
    del h.nodes["stray"]
    h.run(902.0)
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("i-lost",)]
