"""Node groups from Nodes: grouping by the cloud's group labels, the machine, shared labels and taints."""

from __future__ import annotations

from kubetide.live.export.nodegroups import GroupBounds, export_node_groups

from .export_fixtures import node

CATALOG = frozenset({"m5.large", "c5.xlarge"})


def test_nodes_are_grouped_by_the_first_group_label_present_in_order() -> None:
    nodes = [
        node("a", {"eks.amazonaws.com/nodegroup": "ng-1", "cloud.google.com/gke-nodepool": "pool"}),
        node("b", {"cloud.google.com/gke-nodepool": "pool"}),
        node("c", {"karpenter.sh/provisioner-name": "default"}),
        node("d", {"kubernetes.azure.com/agentpool": "agents"}),
        node("e", {"kubetide.io/node-group": "mine", "eks.amazonaws.com/nodegroup": "ng-1"}),
    ]
    out = export_node_groups(nodes, CATALOG, {})
    sizes = {g["name"]: g["initialSize"] for g in out.groups}
    assert sizes == {"ng-1": 1, "pool": 1, "default": 1, "agents": 1, "mine": 1}


def test_without_a_group_label_nodes_group_by_instance_type_and_zone() -> None:
    nodes = [
        node(n, {"node.kubernetes.io/instance-type": "m5.large", "topology.kubernetes.io/zone": z})
        for n, z in (("a", "us-east-1a"), ("b", "us-east-1a"), ("c", "us-east-1b"))
    ]
    groups = {g["name"]: g for g in export_node_groups(nodes, CATALOG, {}).groups}
    assert set(groups) == {"m5.large-us-east-1a", "m5.large-us-east-1b"}
    assert groups["m5.large-us-east-1a"]["initialSize"] == 2
    assert groups["m5.large-us-east-1a"]["instanceType"] == "m5.large"
    assert groups["m5.large-us-east-1b"]["zone"] == "us-east-1b"


def test_shared_labels_stay_per_node_and_simulator_set_ones_go() -> None:
    common = {
        "eks.amazonaws.com/nodegroup": "general",
        "node.kubernetes.io/instance-type": "m5.large",
        "topology.kubernetes.io/zone": "us-east-1a",
        "kubernetes.io/os": "linux",
        "team": "shop",
    }
    nodes = [node("a", {**common, "only-a": "x"}), node("b", {**common, "team": "shop"})]
    (group,) = export_node_groups(nodes, CATALOG, {}).groups
    # The group label stays (workloads select on it); hostname, zone, os and the catalog's instance
    # type are set by the simulator; only-a is not on every node.
    assert group["labels"] == {"eks.amazonaws.com/nodegroup": "general", "team": "shop"}
    assert group["zone"] == "us-east-1a"


def test_an_instance_type_outside_the_catalog_is_a_capacity_and_keeps_its_label() -> None:
    nodes = [node("a", {"node.kubernetes.io/instance-type": "x9.huge"})]
    (group,) = export_node_groups(nodes, CATALOG, {}).groups
    assert "instanceType" not in group
    assert group["capacity"] == {"cpu": "2", "memory": "8Gi", "pods": "110"}
    assert group["labels"] == {"node.kubernetes.io/instance-type": "x9.huge"}


def test_shared_taints_stay_and_lifecycle_taints_go() -> None:
    dedicated = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    nodes = [
        node(
            "a",
            {"pool": "p", "kubetide.io/node-group": "batch"},
            [dedicated, {"key": "gpu", "effect": "NoSchedule"}],
        ),
        node(
            "b",
            {"kubetide.io/node-group": "batch"},
            [
                dedicated,
                {
                    "key": "node.kubernetes.io/not-ready",
                    "effect": "NoExecute",
                    "timeAdded": "2021-03-02T09:59:40Z",
                },
                {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                {"key": "ToBeDeletedByClusterAutoscaler", "value": "1614679180", "effect": "NoSchedule"},
                {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"},
            ],
        ),
    ]
    (group,) = export_node_groups(nodes, CATALOG, {}).groups
    assert group["taints"] == [dedicated]
    assert "labels" not in group  # kubetide.io/node-group is the simulator's own; pool is on one node


def test_the_most_common_machine_is_used_and_a_difference_is_noted() -> None:
    big = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    nodes = [node(n, {"kubetide.io/node-group": "g"}) for n in "abc"] + [
        node("d", {"kubetide.io/node-group": "g"}, capacity=big)
    ]
    out = export_node_groups(nodes, CATALOG, {})
    assert out.groups[0]["capacity"] == {"cpu": "2", "memory": "8Gi", "pods": "110"}
    assert any("differ in capacity" in n for n in out.notes)


def test_bounds_are_assumed_unless_given_and_control_plane_nodes_are_left_out() -> None:
    nodes = [node(f"n{i}", {"kubetide.io/node-group": "big"}) for i in range(7)] + [
        node("s", {"kubetide.io/node-group": "small"}),
        node("m", {"node-role.kubernetes.io/control-plane": ""}),
        node("m2", {"node-role.kubernetes.io/master": ""}),
    ]
    out = export_node_groups(nodes, CATALOG, {"small": GroupBounds(1, 3)})
    groups = {g["name"]: g for g in out.groups}
    assert (groups["big"]["minSize"], groups["big"]["maxSize"], groups["big"]["initialSize"]) == (0, 14, 7)
    assert (groups["small"]["minSize"], groups["small"]["maxSize"]) == (1, 3)
    assert out.assumed_bounds == {"big": GroupBounds(0, 14)}
    assert any("control-plane" in n and "m, m2" in n for n in out.notes)


def test_a_count_outside_given_bounds_starts_inside_them_with_a_note() -> None:
    nodes = [node(f"n{i}", {"kubetide.io/node-group": "g"}) for i in range(5)]
    out = export_node_groups(nodes, CATALOG, {"g": GroupBounds(0, 3)})
    assert out.groups[0]["initialSize"] == 3
    assert any("outside the bounds" in n for n in out.notes)


def test_group_names_become_dns_names() -> None:
    nodes = [node("a", {"eks.amazonaws.com/nodegroup": "My_Group"})]
    assert export_node_groups(nodes, CATALOG, {}).groups[0]["name"] == "my-group"
