"""Templates learned from real nodes persist in a ConfigMap the autoscaler owns, so a group that went
to zero before a restart scales from zero with its real shape (issue 8)."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import Harness, node, pod, template

from kubetide.cloud.fake import Call, RecordingCloud
from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.clusterstate.learned_templates import (
    TEMPLATES_CONFIG_MAP,
    decode_templates,
    encode_templates,
)
from kubetide.cluster.clusterstate.persisted import STATE_CONFIG_MAP
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.pod import Container, HostPort, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint


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
    assert h.run(30.0).templates != first


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
