"""Templates learned from real nodes persist in a ConfigMap the autoscaler owns, so a group that went
to zero before a restart scales from zero with its real shape (issue 8)."""

from __future__ import annotations

import json
from dataclasses import replace

from ca_loop_harness import Harness, node, pod, template

from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.clusterstate.learned_templates import (
    TEMPLATES_CONFIG_MAP,
    decode_templates,
    encode_templates,
)
from kubetide.cluster.clusterstate.persisted import STATE_CONFIG_MAP
from kubetide.cluster.loop.templates import TemplateProvider
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, HostPort, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import Call, RecordingCloud


def test_a_template_round_trips_with_what_scheduling_reads() -> None:
    n = replace(
        node("n1", "ng", cpu=8000),
        taints=(Taint("dedicated", "batch", "NoSchedule"),),
        labels={"group": "ng", "zone": "a"},
    )
    ds = Pod(
        "agent-x",
        namespace="kube-system",
        labels={"app": "agent"},
        owners=(OwnerRef("DaemonSet", "agent", "uid-agent", True),),
        containers=(Container("c", Resources({"cpu": 250, "memory": 2**28}), host_ports=(HostPort(9100),)),),
        priority=1000,
    )
    learned = {"ng": (NodeTemplate(n, (ds,)), 42.0)}
    back = decode_templates(encode_templates(learned))
    assert back is not None
    (tmpl, at) = back["ng"]
    assert at == 42.0 and tmpl.node.labels == n.labels and tmpl.node.taints == n.taints
    assert tmpl.node.allocatable == n.allocatable and tmpl.node.capacity == n.capacity
    (p,) = tmpl.pods
    assert (p.name, p.namespace, p.labels, p.priority) == ("agent-x", "kube-system", {"app": "agent"}, 1000)
    assert p.requests == ds.requests and p.host_ports == ds.host_ports and p.controller == ds.controller
    assert decode_templates({"templates": "not json"}) is None and decode_templates(None) is None


def _group_that_went_to_zero(persist: bool) -> Harness:
    """The provider claims 2 CPUs; the group's real machines have 8. They went to zero; CA restarts."""
    cloud = RecordingCloud().with_group("big", 0, 5, target=1, template=template("big", cpu=2000))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False}))
    h.add_node(node("b1", "big", cpu=8000), "big")
    result = h.run(0.0)
    assert result.templates is not None and result.state is not None
    h.nodes.pop("b1")
    cloud.groups["big"].instances.clear()
    cloud.groups["big"].target = 0
    if persist:
        h.config_maps[f"kube-system/{STATE_CONFIG_MAP}"] = dict(result.state)
        h.config_maps[f"kube-system/{TEMPLATES_CONFIG_MAP}"] = dict(result.templates)
    h.restart()
    h.add_pod(pod("wide", 6000))  # fits only the real machines
    h.run(100.0)
    return h


def test_after_a_restart_the_group_scales_from_zero_with_its_real_shape() -> None:
    h = _group_that_went_to_zero(persist=True)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "big", (1,))]


def test_without_the_config_map_only_the_claimed_template_is_left() -> None:
    h = _group_that_went_to_zero(persist=False)
    assert h.cloud.calls_to("increase_size") == []  # CA's behaviour after a restart


def test_the_config_map_is_written_when_a_shape_changes_not_every_loop() -> None:
    cloud = RecordingCloud().with_group("big", 0, 5, target=1, template=template("big", cpu=8000))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False}))
    h.add_node(node("b1", "big", cpu=8000), "big")
    first = h.run(0.0).templates
    assert first is not None and h.run(10.0).templates == first and h.run(20.0).templates == first
    h.nodes["b1"] = replace(h.nodes["b1"], labels={**h.nodes["b1"].labels, "new": "label"})
    changed = h.run(30.0).templates
    assert changed != first
    # Dated from when the shape changed; the same again while it does not.
    assert _learned_at(changed) == {"big": 30.0} and _learned_at(first) == {"big": 0.0}
    assert h.run(40.0).templates == changed
    # A DaemonSet pod lands on the node: the node's pods are another sequence, the template has it.
    h.add_pod(pod("ds-b1", 100, node_name="b1", owner="DaemonSet"))
    with_ds = h.run(50.0).templates
    assert with_ds != changed and _learned_at(with_ds) == {"big": 50.0}
    assert "ds-b1-template" in next(iter(with_ds.values()))


def _learned_at(data: dict[str, str] | None) -> dict[str, float]:
    assert data is not None
    (text,) = data.values()
    return {gid: g["learnedAt"] for gid, g in json.loads(text)["groups"].items()}


def test_mismatches_name_the_label_or_taint_and_both_values() -> None:
    claimed = replace(template("ng").node, labels={"group": "ng", "tier": "web"}, taints=())
    cloud = RecordingCloud().with_group("ng", 0, 5, target=1, template=NodeTemplate(claimed))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False}))
    real = replace(
        node("n1", "ng"),
        labels={"group": "ng", "kubernetes.io/hostname": "n1", "tier": "batch"},
        taints=(Taint("dedicated", "batch", "NoSchedule"),),
    )
    h.add_node(real, "ng")
    result = h.run(0.0)
    found = {e.data["resource"]: e for e in result.events if e.reason == "NodeTemplateMismatch"}
    assert found["label tier"].data == {
        "group": "ng",
        "resource": "label tier",
        "template": "web",
        "observed": "batch",
    }
    assert found["taint dedicated"].data["template"] == "<absent>"
    assert found["taint dedicated"].data["observed"] == "batch:NoSchedule"
    assert (
        "label tier differs: the provider's template has web, its nodes have batch"
        in found["label tier"].message
    )


def test_labels_kubetide_puts_on_nodes_are_not_a_mismatch() -> None:
    # The node agent labels the Nodes it registers for a test cloud's instances kubetide.io/node-group;
    # the cloud's template (an ASG's) knows nothing of it: no NodeTemplateMismatch at every start.
    claimed = replace(template("ng").node, labels={"group": "ng"}, taints=())
    cloud = RecordingCloud().with_group("ng", 0, 5, target=1, template=NodeTemplate(claimed))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False}))
    real = replace(
        node("n1", "ng"),
        labels={"group": "ng", "kubernetes.io/hostname": "n1", "kubetide.io/node-group": "ng", "extra": "x"},
        taints=(),
    )
    h.add_node(real, "ng")
    found = [e.data["resource"] for e in h.run(0.0).events if e.reason == "NodeTemplateMismatch"]
    assert found == ["label extra"]  # a user's label still is


def test_a_template_is_made_again_from_a_new_view_or_new_pods_only() -> None:
    # The loop passes the node's pod sequence through unchanged while its pods are (the simulator's
    # world keeps them): the template made from the same view and sequence is kept, as it is equal.
    cloud = RecordingCloud().with_group("ng", 0, 5, target=1, template=template("ng"))
    provider = TemplateProvider()
    groups = list(cloud.node_groups())
    n1 = node("n1", "ng")
    pods: tuple[Pod, ...] = (pod("ds-n1", 100, node_name="n1", owner="DaemonSet"),)

    def made(view: NodeView, on_node: tuple[Pod, ...]) -> NodeTemplate:
        out, _ = provider.compute(groups, [view], {view.name: "ng"}, {view.name: on_node}, 0.0)
        return out["ng"]

    first = made(n1, pods)
    assert made(n1, pods) is first
    relabelled = replace(n1, labels={**n1.labels, "tier": "web"})
    assert made(relabelled, pods).node.labels["tier"] == "web"
    more = (*pods, pod("ds2-n1", 100, node_name="n1", owner="DaemonSet"))
    assert [p.name for p in made(relabelled, more).pods] == ["ds-n1-template", "ds2-n1-template"]
