"""The cluster autoscaler's shadow over in-memory ports: it decides in the running autoscaler's place,
finds where the two differ, and writes nothing (its gate and its cloud refuse every write)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kubetide.cloud.instance import CloudProviderError, Instance, InstanceState, InstanceStatus
from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.live.cluster_autoscaler.published import PublishedPlans
from kubetide.live.guard import GuardedClusterPort, LeadershipLost, WriteGate
from kubetide.live.shadow.events import RunningEvents, ca_event_times
from kubetide.live.shadow.journal import Journal
from kubetide.live.shadow.shadow import CAShadow, ShadowRecorder
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

sys.path.insert(0, str(Path(__file__).parents[2] / "cluster"))  # the loop tests' builders
from ca_loop_harness import node, pod, template

PRIORITIES = {
    "kube-system/cluster-autoscaler-priority-expander": {"priorities": "10:\n  - big\n1:\n  - small\n"}
}
READS = {"target_size", "refresh"}  # what the recording cloud records that is not a write


class Source:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeView] = {}
        self.pods: dict[str, Pod] = {"p": pod("p", 1500, created=-100.0)}

    def world(self) -> World:
        return World(list(self.nodes.values()), list(self.pods.values()), config_maps=PRIORITIES)


def shadow(
    tmp_path: Path, published: PublishedPlans | None = None, events: RunningEvents | None = None
) -> tuple[CAShadow, RecordingCloud, RecordingClusterPort, Source]:
    cloud = (
        RecordingCloud()
        .with_group("small", 0, 3, template=template("small", cpu=2000))
        .with_group("big", 0, 3, template=template("big", cpu=8000))
    )
    source = Source()
    gate = WriteGate("cluster-autoscaler", lambda: True, shadow=True)
    port = RecordingClusterPort(source.nodes, source.pods)
    options = AutoscalingOptions(expander="priority", scale_down_unneeded_time=3600.0)

    def build(c: CloudProvider) -> StaticAutoscaler:
        return StaticAutoscaler(c, GuardedClusterPort(port, gate), options)  # type: ignore[arg-type]

    recorder = ShadowRecorder("cluster-autoscaler", "CA", Journal(tmp_path), 10.0)
    return CAShadow(source, cloud, recorder, build, gate, published, events), cloud, port, source


def with_one_quiet_small_node(cas: CAShadow, cloud: RecordingCloud, source: Source) -> None:
    """No pod, one node in the small group; the looks at 0-8 s find nothing to disagree on."""
    del source.pods["p"]
    source.nodes["small-1"] = node("small-1", "small")
    cloud.groups["small"].target = 1
    cloud.with_node("small", source.nodes["small-1"])
    for t in range(0, 10, 2):
        assert cas.tick(float(t)).opened == ()


def test_the_running_autoscalers_scale_up_is_taken_back_and_kubetide_chooses_its_own_group(
    tmp_path: Path,
) -> None:
    cas, cloud, port, _ = shadow(tmp_path)
    first = cas.tick(0.0)
    assert first.timeline["intents"] == ["scale-up big"]
    # The running autoscaler (least-waste) adds a small node; it is on its way, not registered yet.
    cloud.groups["small"].target = 1
    cloud.with_instance("small", Instance("small-1", InstanceStatus(InstanceState.Creating)))
    for t in range(2, 14, 2):
        tick = cas.tick(float(t))
        # kubetide still decides on the cluster as it was: the small node taken back, big chosen.
        assert tick.timeline["intents"] == ["scale-up big"], t
        if tick.opened:
            break
    (d,) = tick.opened
    assert (d.kind, d.subject, dict(d.delta)) == ("scale-up-group", "small", {"small": -1, "big": 1})
    assert "1 pending pod (default/p) needs a new node; expander: priority kept big" in d.why
    assert tick.timeline["kubetide"] == {"small": 0, "big": 1} and tick.timeline["targets"] == {
        "small": 1,
        "big": 0,
    }
    # Matched or settled, the running scale-up is no longer taken back: kubetide sees the node coming.
    assert cas.tick(20.0).timeline["intents"] == []
    written = [json.loads(line) for line in (tmp_path / "disagreements.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in written] == ["scale-up-group"]
    # Nothing was written anywhere: the cloud saw reads only, the cluster port nothing.
    assert {c.method for c in cloud.calls} <= READS and port.calls == []


def test_a_node_the_running_autoscaler_deletes_is_one_kubetide_would_have_kept(tmp_path: Path) -> None:
    cas, cloud, _, source = shadow(tmp_path)
    with_one_quiet_small_node(cas, cloud, source)
    # Tainted by the running autoscaler: being deleted.
    taint = Taint("ToBeDeletedByClusterAutoscaler", "10", "NoSchedule")
    source.nodes["small-1"] = replace(source.nodes["small-1"], taints=(taint,))
    opened = []
    for t in range(10, 24, 2):
        opened += cas.tick(float(t)).opened
    (d,) = opened
    assert (d.kind, d.subject) == ("scale-down-running-only", "small-1")
    assert d.why.startswith("unneeded since 00:00:00") and "--scale-down-unneeded-time (3600s)" in d.why
    assert d.until == 3600.0


def test_a_shadows_ports_refuse_every_write(tmp_path: Path) -> None:
    cas, cloud, port, _ = shadow(tmp_path)
    (group,) = [g for g in cas.autoscaler.cloud.node_groups() if g.id() == "small"]
    with pytest.raises(CloudProviderError):
        group.increase_size(1)
    with pytest.raises(LeadershipLost):
        cas.autoscaler.port.delete_node("n")
    assert cloud.calls == [] and port.calls == []


def test_each_plan_is_published_for_explain_as_a_shadows(tmp_path: Path) -> None:
    published = PublishedPlans(mode="shadow")
    cas, _, _, _ = shadow(tmp_path, published)
    cas.tick(0.0)
    status, page = published.page({})
    assert status == 200 and page["mode"] == "shadow" and page["loops"] == 1
    explanation = page["lastScaleUp"]["explanation"]
    assert explanation["scaleUp"]["chosen"] == [{"group": "big", "from": 0, "to": 1}]
    assert explanation["scaleUp"]["expander"][0]["filter"] == "priority"


def ca_event(at: float, reason: str, obj: dict[str, str], message: str) -> dict[str, Any]:
    """A core/v1 Event as CA's recorder writes it (``source.component: cluster-autoscaler``)."""
    return {
        "metadata": {"uid": f"{reason}-{obj['name']}-{at}", "namespace": obj.get("namespace", "default")},
        "source": {"component": "cluster-autoscaler"},
        "involvedObject": obj,
        "reason": reason,
        "message": message,
        "count": 1,
        "lastTimestamp": datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


STATUS = {"kind": "ConfigMap", "namespace": "kube-system", "name": "cluster-autoscaler-status"}


def occurrence(at: float, reason: str, obj: str, message: str) -> dict[str, Any]:
    return {"t": at, "reason": reason, "object": obj, "message": message}


def test_the_times_are_read_from_ca_1_31s_events() -> None:
    """The reasons and messages of CA 1.31.5: executor.go executeScaleUp (ScaledUpGroup), actuator.go
    taintNode / deleteAsyncEmpty / deleteAsyncDrain, delete_in_batch.go
    RegisterAndRecordSuccessfulScaleDownEvent, eventing_scale_up_processor.go (TriggeredScaleUp)."""
    cm = "ConfigMap/kube-system/cluster-autoscaler-status"
    said = ca_event_times(
        [
            occurrence(5.0, "ScaledUpGroup", cm, "Scale-up: setting group small size to 2 instead of 1 (max: 3)"),
            occurrence(6.0, "ScaledUpGroup", cm, "Scale-up: group small size set to 2 instead of 1 (max: 3)"),
            occurrence(5.0, "TriggeredScaleUp", "Pod/ns/p1", "pod triggered scale-up: [{small 1->2 (max: 3)}]"),
            occurrence(5.0, "TriggeredScaleUp", "Pod/ns/p2", "pod triggered scale-up: [{small 1->2 (max: 3)}]"),
            occurrence(7.0, "ScaleDown", "Node/n1", "marked the node as toBeDeleted/unschedulable"),
            occurrence(7.0, "ScaleDownEmpty", cm, 'Scale-down: removing empty node "n1"'),
            occurrence(9.0, "ScaleDownEmpty", cm, "Scale-down: empty node n1 removed"),
            occurrence(8.0, "ScaleDown", cm, "Scale-down: removing node n2, utilization: {0.1 0 0 cpu 0.1}, "
                       "pods to reschedule: ns/a"),
            occurrence(12.0, "ScaleDown", cm, "Scale-down: node n3 removed with drain"),
            occurrence(13.0, "ScaleDown", "Node/n4", "nodes removed by cluster autoscaler"),
            occurrence(13.0, "ScaleDownFailed", "Node/n5", "failed to mark the node as toBeDeleted/unschedulable: x"),
        ]
    )  # fmt: skip
    assert said.scale_ups == {"small": 5.0}
    assert said.triggered_by == {"small": ["ns/p1", "ns/p2"]}
    # The decision's time first (the taint's Event); a removal's when nothing earlier said.
    assert said.removals == {"n1": 7.0, "n2": 8.0, "n3": 12.0, "n4": 13.0}


def test_the_running_autoscalers_events_time_its_actions_and_name_its_pods(tmp_path: Path) -> None:
    """A node deleted between two looks (its taint never seen) is timed by CA's Event, not by the
    look; a scale-up by its ScaledUpGroup Event, with the pods it was for."""
    listed: list[dict[str, Any]] = []
    cas, cloud, _, source = shadow(tmp_path, events=RunningEvents(lambda: listed, "the cluster autoscaler"))
    with_one_quiet_small_node(cas, cloud, source)
    # Between the looks at 8 s and 20 s: tainted at 11 s, deleted, gone.
    listed.append(
        ca_event(11.0, "ScaleDown", {"kind": "Node", "name": "small-1"}, "marked the node as toBeDeleted/unschedulable")
    )  # fmt: skip
    del source.nodes["small-1"]
    cloud.groups["small"].target = 0
    cloud.groups["small"].instances.clear()
    opened = list(cas.tick(20.0).opened)
    # And a pod makes it scale the small group up at 21 s.
    source.pods["q"] = pod("q", 1500, created=0.0)
    cloud.groups["small"].target = 1
    cloud.with_instance("small", Instance("small-2", InstanceStatus(InstanceState.Creating)))
    scaled = "Scale-up: setting group small size to 1 instead of 0 (max: 3)"
    listed.append(ca_event(21.0, "ScaledUpGroup", STATUS, scaled))
    pod_ref = {"kind": "Pod", "namespace": "default", "name": "q"}
    listed.append(
        ca_event(21.0, "TriggeredScaleUp", pod_ref, "pod triggered scale-up: [{small 0->1 (max: 3)}]")
    )
    for t in range(24, 50, 2):
        opened += cas.tick(float(t)).opened
    by_kind = {d.kind: d for d in opened}
    deleted = by_kind["scale-down-running-only"]
    assert (deleted.subject, deleted.at) == ("small-1", 11.0)
    assert deleted.running == "deleted node small-1 (group small) at 00:00:11"
    swapped = by_kind["scale-up-group"]
    assert swapped.at == 21.0
    assert swapped.running == "scaled up group small (0 -> 1) at 00:00:21 for pod default/q"
