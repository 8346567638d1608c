"""Scale-up options are estimated on the loop's cluster snapshot, for the pod groups each template can
help, as CA 1.31's ``ScaleUpOrchestrator.ScaleUp`` does (``core/scaleup/orchestrator/orchestrator.go``:
``SchedulablePodGroups`` checks each group's sample pod on the template node added to the cluster
snapshot; ``ComputeExpansionOption`` runs the estimator on ``autoscalingContext.ClusterSnapshot``;
``ComputeSimilarNodeGroups`` keeps the similar groups whose schedulable pod groups include the main
group's, ``matchingSchedulablePodGroups``). Pods already running count for topology spread and
inter-pod anti-affinity there."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import Harness

from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.expander import build_strategy
from kubetide.cluster.expander.option import ExpansionContext
from kubetide.cluster.scaleup.orchestrator import (
    GroupState,
    ScaleUpSettings,
    expansion_options,
    plan_scale_up,
)
from kubetide.model.node import HOSTNAME_LABEL, ZONE_LABEL, NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import PodAffinityTerm, TopologySpreadConstraint
from kubetide.model.selectors import LabelSelector, Requirement
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.testing.cloud import RecordingCloud

GIB = 2**30
WEB = LabelSelector((Requirement("app", "In", ("web",)),))


def _node(name: str, zone: str, cpu: int = 2000) -> NodeView:
    alloc = Resources({"cpu": cpu, "memory": 4 * GIB, "pods": 110})
    return NodeView(
        name,
        labels={HOSTNAME_LABEL: name, ZONE_LABEL: zone},
        allocatable=alloc,
        capacity=alloc,
    )


def _web(name: str, node_name: str = "", cpu: int = 500, **terms: object) -> Pod:
    return Pod(
        name,
        labels={"app": "web"},
        owners=(OwnerRef("ReplicaSet", "web", "uid-web", True),),
        containers=(Container("c", Resources({"cpu": cpu, "memory": 256 * 2**20})),),
        node_name=node_name,
        **terms,  # type: ignore[arg-type]
    )


SPREAD = {"topology_spread": (TopologySpreadConstraint(1, ZONE_LABEL, "DoNotSchedule", WEB),)}


def _groups() -> list[GroupState]:
    return [GroupState(z, 0, 10, 1, NodeTemplate(_node(f"template-{z}", z))) for z in ("zone-a", "zone-b")]


def _cluster() -> ClusterSnapshot:
    """One full node per zone; one web pod runs in zone-a, none in zone-b."""
    a, b = _node("a-1", "zone-a", cpu=500), _node("b-1", "zone-b", cpu=500)
    return ClusterSnapshot([a, b], [_web("running", "a-1", **SPREAD)])


def test_zone_spread_counts_the_pods_running_in_the_cluster() -> None:
    pending = [_web(f"p{k}", **SPREAD) for k in range(2)]
    snap = _cluster()
    options, _ = expansion_options(pending, _groups(), [], ScaleUpSettings(), snapshot=snap)
    # zone-a already runs one: a new zone-a node would make the skew 2; zone-b takes both pods (the
    # second one evens the zones), on one node.
    assert [(o.group, o.node_count, len(o.pods)) for o in options] == [("zone-b", 1, 2)]
    # On an empty cluster (no snapshot), each zone would look able to take them.
    options, _ = expansion_options(pending, _groups(), [], ScaleUpSettings())
    assert sorted(o.group for o in options) == ["zone-a", "zone-b"]
    assert snap.num_slots == 2 and [len(snap.pods_on(i)) for i in range(2)] == [1, 0]  # unchanged


def test_anti_affinity_to_running_pods_leaves_a_group_no_option() -> None:
    # Zone anti-affinity to the pod running in zone-a: a template node in zone-a cannot take the pod
    # (SchedulablePodGroups drops the group), zone-b can.
    anti = {"pod_anti_affinity": (PodAffinityTerm(WEB, ZONE_LABEL),)}
    pending = [_web("p0", **anti)]
    options, _ = expansion_options(pending, _groups(), [], ScaleUpSettings(), snapshot=_cluster())
    assert [o.group for o in options] == ["zone-b"]


def test_a_similar_group_that_cannot_help_the_same_pods_is_not_balanced() -> None:
    # Both templates are alike but for the zone, which similarity ignores; only zone-b can help the
    # pending pods, so zone-a is not a similar group for them (matchingSchedulablePodGroups).
    pending = [_web(f"p{k}", **SPREAD) for k in range(2)]
    settings = ScaleUpSettings(balance_similar_node_groups=True)
    plan = plan_scale_up(
        pending,
        _groups(),
        [],
        settings,
        build_strategy("least-waste"),
        ExpansionContext(),
        snapshot=_cluster(),
    )
    assert [(i.group, i.new_size) for i in plan.infos] == [("zone-b", 2)]
    # Pods both zones could help are balanced across them.
    plain = [_web(f"q{k}", cpu=1500) for k in range(2)]
    plan = plan_scale_up(
        plain, _groups(), [], settings, build_strategy("least-waste"), ExpansionContext(), snapshot=_cluster()
    )
    assert sorted((i.group, i.new_size) for i in plan.infos) == [("zone-a", 2), ("zone-b", 2)]


def test_the_loop_scales_up_the_zone_the_spread_allows() -> None:
    # zone-a's node is full with two web pods, zone-b's (twice as big: least-waste would rather have
    # zone-a) with another app's pod. A web pod pending with a zone spread could only go to a new zone-b
    # node (a zone-a one would make the skew 3).
    cloud = RecordingCloud()
    h = Harness(cloud)
    for zone, cpu in (("zone-a", 1000), ("zone-b", 2000)):
        cloud.with_group(zone, min_size=0, max_size=5, target=1)
        n = _node(f"{zone}-1", zone, cpu=cpu)
        h.add_node(replace(n, provider_id=n.name, creation_time=-10_000.0), zone)
    for k in range(2):
        h.add_pod(replace(_web(f"running-{k}", "zone-a-1", **SPREAD), phase="Running", ready=True))
    other = replace(_web("other", "zone-b-1", cpu=1800), labels={"app": "other"}, phase="Running", ready=True)
    h.add_pod(other)
    waiting = "0/2 nodes are available: 2 Insufficient cpu."
    h.add_pod(replace(_web("p0", **SPREAD), creation_time=-100.0, unschedulable_message=waiting))
    result = h.run(0.0)
    assert result.scale_up_result == "Successful"
    assert result.scale_up is not None and result.scale_up.plan is not None
    assert [(i.group, i.new_size) for i in result.scale_up.plan.infos] == [("zone-b", 2)]
