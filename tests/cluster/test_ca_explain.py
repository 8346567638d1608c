"""explain_loop reads a loop's own decision values: a PDB-blocked node names the pod and the rule, a pod
that fits no group names each group's first reason."""

from __future__ import annotations

from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.explain import explain_loop, render_text
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.fields import Node
from kubetide.model.selectors import LabelSelector
from kubetide.scheduling.drainability import PDB
from kubetide.testing.cloud import RecordingCloud


def test_a_pdb_blocked_node_and_a_pod_no_group_can_take() -> None:
    cloud = (
        RecordingCloud()
        .with_group("ng", 1, 10, target=3, template=template("ng"))
        # At its max with no node: a target above the group's nodes with no scale-up in flight makes a
        # group unhealthy in CA 1.31 (clusterstate.go IsNodeGroupHealthy), so max and target are 0 here.
        .with_group("full", 0, 0, target=0, template=template("full"))
    )
    h = Harness(cloud, AutoscalingOptions.from_flags({}))
    for name in ("n1", "n2", "n3"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n1"))
    h.add_pod(pod("small", 200, node_name="n2"))
    h.pdbs.append(PDB("default", LabelSelector.parse(Node({"matchLabels": {"app": "web"}})), 0))
    h.add_pod(pod("huge", 5000))  # no group's machine has 5 CPUs
    result = h.run(0.0)
    ex = explain_loop(result, 0.0, h.world())
    by_node = {n.node: n for n in ex.nodes}
    assert by_node["n2"].reason == "BlockedByPod"
    assert (by_node["n2"].blocking_pod, by_node["n2"].blocking_reason) == ("default/small", "NotEnoughPdb")
    assert by_node["n3"].unneeded_since == 0.0
    (huge,) = [p for p in ex.pods if p.pod == "default/huge"]
    assert huge.triggered is None
    assert huge.per_group == {"ng": "Insufficient cpu", "full": "max node group size reached"}
    text = render_text(ex)
    assert "n2: kept: BlockedByPod (pod default/small: NotEnoughPdb)" in text
    assert "full: max node group size reached" in text


def test_why_a_removable_node_is_kept_is_an_event_once_per_reason() -> None:
    cloud = RecordingCloud().with_group("ng", 1, 10, target=3, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags({}))
    for name in ("n1", "n2", "n3"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n1"))
    h.add_pod(pod("small", 200, node_name="n2"))
    h.pdbs.append(PDB("default", LabelSelector.parse(Node({"matchLabels": {"app": "web"}})), 0))
    for t in (0.0, 10.0, 20.0):
        h.run(t)
    events = [e for e in h.events if e.reason == "UnremovableNode"]
    assert [(e.object, e.message) for e in events] == [
        ("Node/n2", "node n2 cannot be removed: BlockedByPod (pod default/small: NotEnoughPdb)")
    ]
    assert events[0].data == {
        "node": "n2", "group": "ng", "reason": "BlockedByPod", "pod": "default/small", "podReason": "NotEnoughPdb"
    }  # fmt: skip


def test_each_kind_of_kept_node_names_its_rule() -> None:
    """Eligibility (annotation, group at its minimum), the drain rules (a pod no controller owns) and
    the removal simulation (a pod pinned to its node), each as explain reports it."""
    from dataclasses import replace

    cloud = (
        RecordingCloud()
        .with_group("ng", 1, 10, target=4, template=template("ng"))
        .with_group("one", 1, 3, target=1, template=template("one"))
    )
    h = Harness(cloud, AutoscalingOptions.from_flags({}))
    for name in ("n1", "n2", "n3", "n4"):
        h.add_node(node(name, "ng"), "ng")
    h.nodes["n2"] = replace(
        h.nodes["n2"], annotations={"cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"}
    )
    h.add_node(node("m1", "one"), "one")
    h.add_pod(pod("big", 1500, node_name="n1"))
    h.add_pod(replace(pod("bare", 200, node_name="n3"), owners=()))
    h.add_pod(replace(pod("pinned", 300, node_name="n4"), node_selector={"kubernetes.io/hostname": "n4"}))
    h.run(0.0)
    result = h.run(700.0)  # past --scale-down-unneeded-time: the minimum size is checked at removal
    by_node = {n.node: n for n in explain_loop(result, 700.0, h.world()).nodes}
    assert by_node["n1"].reason == "NotUnderutilized"
    assert by_node["n2"].reason == "ScaleDownDisabledAnnotation"
    assert (by_node["n3"].reason, by_node["n3"].blocking_reason) == ("BlockedByPod", "NotReplicated")
    assert by_node["n4"].reason == "NoPlaceToMovePods"
    # Upstream drops a group at its minimum from the candidates without a reason; explain says why.
    assert by_node["m1"].reason is None
    assert by_node["m1"].not_candidate == "node group one is at its minimum size (1)"
    assert "m1: not a candidate: node group one is at its minimum size (1)" in render_text(
        explain_loop(result, 700.0, h.world())
    )
