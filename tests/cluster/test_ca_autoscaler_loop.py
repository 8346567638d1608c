"""StaticAutoscaler.run_once: scale-up, failures and backoff, unregistered nodes, scale-down, restarts."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import Harness, node, pod, template

from kubetide.cloud.instance import ErrorClass, Instance, InstanceErrorInfo, InstanceState, InstanceStatus
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.model.fields import Node
from kubetide.model.scheduling_terms import Taint
from kubetide.model.selectors import LabelSelector
from kubetide.scheduling.drainability import PDB
from kubetide.testing.cloud import Call, RecordingCloud

PRIORITIES = {
    "kube-system/cluster-autoscaler-priority-expander": {"priorities": "10:\n  - spot\n1:\n  - general\n"}
}


def two_groups(**flags: object) -> Harness:
    cloud = (
        RecordingCloud()
        .with_group("spot", 0, 10, template=template("spot"))
        .with_group("general", 1, 10, target=1, template=template("general"))
    )
    options = AutoscalingOptions.from_flags({"expander": "priority,least-waste", **flags})
    h = Harness(cloud, options, config_maps=PRIORITIES)
    h.add_node(node("general-1", "general"), "general")
    h.add_pod(pod("busy", 1800, node_name="general-1"))
    return h


def test_scale_up_from_pending_pods_picks_the_group_and_the_count() -> None:
    h = two_groups()
    for i in range(5):
        h.add_pod(pod(f"p{i}"))
    result = h.run(0.0)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "spot", (2,))]  # 4 x 500m per node
    assert result.stats.scale_ups == 1 and result.stats.nodes_added == 2
    scaled = [e for e in result.events if e.reason == "ScaledUpGroup"]
    assert scaled[-1].message == "Scale-up: group spot size set to 2 instead of 0 (max: 10)"
    assert scaled[-1].data == {"group": "spot", "from": 0, "to": 2}
    triggered = [e for e in result.events if e.reason == "TriggeredScaleUp"]
    assert len(triggered) == 5 and triggered[0].message == "pod triggered scale-up: [{spot 0->2 (max: 10)}]"
    assert triggered[0].object == "Pod/default/p0" and triggered[0].data["groups"][0]["group"] == "spot"
    # Next loop: the pods fit on the upcoming nodes, so no second scale-up.
    h.run(10.0)
    assert len(h.cloud.calls_to("increase_size")) == 1


def test_pods_that_fit_no_group_get_aggregated_not_trigger_reasons() -> None:
    h = two_groups()
    # At its max (0). A target raised above the group's nodes by hand would make the group unhealthy
    # instead (clusterstate.go IsNodeGroupHealthy: no readiness, MinNodes = target > 0), so the max is 0.
    h.cloud.groups["spot"].max = 0
    h.add_pod(pod("huge", 5000))
    result = h.run(0.0)
    assert h.cloud.calls_to("increase_size") == []
    (event,) = [e for e in result.events if e.reason == "NotTriggerScaleUp"]
    assert event.message == "pod didn't trigger scale-up: 1 Insufficient cpu, 1 max node group size reached"
    assert event.data == {
        "reasons": {"Insufficient cpu": 1, "max node group size reached": 1},
        "groups": {"general": ["Insufficient cpu"], "spot": ["max node group size reached"]},
    }
    # Repeated every loop upstream; deduplicated for 5 minutes (--record-duplicated-events=false).
    assert "NotTriggerScaleUp" not in h.reasons(h.run(10.0))


def test_stockout_backs_the_group_off_and_fails_over_at_once() -> None:
    h = two_groups()
    for i in range(3):
        h.add_pod(pod(f"p{i}"))
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "spot", (1,))]
    error = InstanceErrorInfo(ErrorClass.OutOfResources, "STOCKOUT", "no capacity")
    h.cloud.with_instance("spot", Instance("i-1", InstanceStatus(InstanceState.Creating, error)))
    result = h.run(10.0)
    reasons = h.reasons(result)
    assert (
        "ScaleUpFailed" in reasons and "NodeGroupBackoff" in reasons and "DeleteCreatedWithError" in reasons
    )
    backoff = next(e for e in result.events if e.reason == "NodeGroupBackoff")
    assert backoff.data == {"group": "spot", "until": 310.0}
    # A duration as CA prints them, not the time as seconds (live: since the epoch, 1.79582e+09s).
    assert backoff.message == (
        "node group spot backed off for 5m0s after failed scale-up (OutOfResource.STOCKOUT)"
    )
    assert h.cloud.calls_to("delete_nodes") == [Call("delete_nodes", "spot", ("i-1",))]
    # The same loop scales the next group by priority instead of waiting for the provision timeout.
    assert h.cloud.calls_to("increase_size")[-1] == Call("increase_size", "general", (1,))
    assert result.stats.failed_scale_ups == 1 and result.stats.backoffs == 1


def test_increase_size_error_backs_off_and_the_next_loop_tries_another_group() -> None:
    h = two_groups()
    h.cloud.with_failure("increase_size", group="spot")
    h.add_pod(pod("p0"))
    result = h.run(0.0)
    assert "FailedToScaleUpGroup" in h.reasons(result) and result.stats.backoffs == 1
    h.run(10.0)
    assert h.cloud.calls_to("increase_size")[-1] == Call("increase_size", "general", (1,))


def test_scale_up_times_out_keeps_the_target_and_the_size_is_fixed_a_loop_later() -> None:
    """CA 1.31 (issue 23 item 13): clusterstate.go updateScaleRequests backs the group off on
    ``ExpectedAddTime.Before(now)`` and drops the request, keeping the target (kubetide used to revert
    the increase at once, as 1.36 does); the missing node still counts as upcoming (GetUpcomingNodes), and
    static_autoscaler.go fixNodeGroupSize lowers the target once the size has been wrong for the
    provision time (``FirstObserved.Add(maxNodeProvisionTime).Before(now)``), skipping that loop."""
    h = two_groups()
    h.add_pod(pod("p0"))
    h.run(0.0)
    assert h.cloud.groups["spot"].target == 1
    h.run(10.0)  # the wrong size (0 nodes for a target of 1) is first observed here
    assert "ScaleUpTimedOut" not in h.reasons(h.run(900.0))
    result = h.run(910.0)
    timed_out = next(e for e in result.events if e.reason == "ScaleUpTimedOut")
    assert timed_out.data == {"group": "spot"}
    assert timed_out.message == "Nodes added to group spot failed to register within 15m10s"
    assert "NodeGroupBackoff" in h.reasons(result) and result.stats.failed_scale_ups == 1
    assert h.cloud.calls_to("decrease_target_size") == [] and h.cloud.groups["spot"].target == 1
    assert len(h.cloud.calls_to("increase_size")) == 1  # the pod still waits on the upcoming node
    result = h.run(920.0)
    assert h.cloud.calls_to("decrease_target_size") == [Call("decrease_target_size", "spot", (-1,))]
    assert result.scale_up_result == ""  # the loop that fixed a size does nothing else
    h.run(930.0)
    assert h.cloud.calls_to("increase_size")[-1] == Call("increase_size", "general", (1,))
    assert len(h.cloud.calls_to("decrease_target_size")) == 1  # never twice for one timeout


def test_long_unregistered_instance_is_deleted() -> None:
    # An instance there before kubetide looked is kept unless this flag says otherwise (test_ca_foreign_instances).
    h = two_groups(**{"delete-unregistered-foreign-instances": True})
    h.cloud.groups["spot"].target = 1
    h.cloud.with_instance("spot", Instance("i-lost", InstanceStatus(InstanceState.Running)))
    h.run(0.0)
    assert h.cloud.calls_to("delete_nodes") == []
    result = h.run(901.0)
    assert h.cloud.calls_to("delete_nodes") == [Call("delete_nodes", "spot", ("i-lost",))]
    event = next(e for e in result.events if e.reason == "DeleteUnregistered")
    assert event.message == "Removed unregistered node i-lost" and event.data == {
        "group": "spot",
        "instance": "i-lost",
    }
    assert result.stats.unregistered_removed == 1


def drain_setup(**flags: object) -> Harness:
    cloud = RecordingCloud().with_group("ng", 1, 10, target=3, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags(dict(flags)))
    for name in ("n1", "n2", "n3"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n1"))
    h.add_pod(pod("small", 200, node_name="n2"))
    return h


def test_empty_node_is_removed_after_the_unneeded_time_and_never_below_min() -> None:
    h = drain_setup(**{"max-drain-parallelism": 0})
    first = h.run(0.0)
    assert set(first.unneeded) == {"n2", "n3"}  # n2's pod fits on n1
    assert h.cloud.calls_to("delete_nodes") == []
    assert h.run(600.0).stats.nodes_removed == 0  # unneeded strictly longer than 10m
    result = h.run(610.0)
    assert h.cloud.calls_to("delete_nodes") == [Call("delete_nodes", "ng", ("n3",))]
    assert [e.message for e in result.events if e.reason == "ScaleDownEmpty"] == [
        'Scale-down: removing empty node "n3"'
    ]
    assert any(t.key == TO_BE_DELETED_TAINT for name, taints in h.taint_calls if name == "n3" for t in taints)
    assert result.stats.scale_downs == 1 and result.stats.nodes_removed == 1
    # n2 would drain, but draining is disabled here; n1 is too busy. Min size 1 is never crossed.
    for t in range(620, 2000, 10):
        h.run(float(t))
    assert h.cloud.groups["ng"].target >= 1


def test_drain_evicts_then_deletes_and_pdb_blocks() -> None:
    h = drain_setup()
    h.nodes.pop("n3")
    h.cloud.groups["ng"].instances.pop("n3")
    h.cloud.groups["ng"].target = 2
    h.run(0.0)
    h.run(610.0)  # tainted; evicted 5 s later, and looked for at once (drain.go waitPodsToDisappear)
    assert h.evicted == ["small"] and h.api.grace_periods == [("small", 30)]
    assert h.cloud.calls_to("delete_nodes") == []  # the evicted pod was still there
    result = h.run(620.0)  # the next look, 5 s after the first: the pod is gone
    assert h.cloud.calls_to("delete_nodes") == [Call("delete_nodes", "ng", ("n2",))]
    assert "nodes removed by cluster autoscaler" in [e.message for e in result.events]


def test_pdb_with_no_disruptions_allowed_keeps_the_node() -> None:
    h = drain_setup()
    h.pdbs.append(PDB("default", LabelSelector.parse(Node({"matchLabels": {"app": "web"}})), 0))
    h.run(0.0)
    result = h.run(610.0)
    assert result.unremovable["n2"] == "BlockedByPod"
    assert h.evicted == [] and [c.args for c in h.cloud.calls_to("delete_nodes")] == [("n3",)]


def test_refused_evictions_are_retried_then_the_deletion_is_abandoned() -> None:
    h = drain_setup(**{"max-scale-down-parallelism": 1})
    h.nodes.pop("n3")
    h.cloud.groups["ng"].instances.pop("n3")
    h.cloud.groups["ng"].target = 2
    h.refuse_evictions = True
    h.run(0.0)
    h.run(610.0)
    assert any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)
    h.run(700.0)
    assert h.cloud.calls_to("delete_nodes") == []
    result = h.run(740.0)  # past --max-pod-eviction-time (2m)
    assert "ScaleDownFailed" in h.reasons(result)
    assert not any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)


def test_scale_down_waits_after_a_scale_up() -> None:
    h = drain_setup(**{"max-drain-parallelism": 0})
    for i in range(3):
        h.add_pod(pod(f"pending-{i}", 1900, created=0.0))
    h.run(5.0)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "ng", (2,))]  # one fits on n3
    for i in range(3):
        h.pods.pop(f"pending-{i}")
    result = h.run(300.0)
    assert result.scale_down_result == "InCooldown" and "n3" in result.unneeded  # timers still run
    h.run(604.0)
    assert h.cloud.calls_to("delete_nodes") == []  # still in cooldown (5s + 10m)
    h.run(900.0)
    assert h.cloud.calls_to("delete_nodes") == []  # unneeded since 300s: not strictly longer than 10m
    h.run(910.0)
    assert Call("delete_nodes", "ng", ("n3",)) in h.cloud.calls


def test_restart_resumes_a_drain_from_the_taint_instead_of_forgetting_it() -> None:
    h = drain_setup()
    h.nodes["n2"] = replace(h.nodes["n2"], taints=(Taint(TO_BE_DELETED_TAINT, "1000", "NoSchedule"),))
    h.restart()
    h.run(1100.0)
    assert h.evicted == ["small"]
    assert Call("delete_nodes", "ng", ("n2",)) in h.cloud.calls


def test_a_restart_without_state_counts_the_target_as_upcoming_and_the_group_as_unhealthy() -> None:
    """CA 1.31 after a restart that forgot the request (no state ConfigMap): GetUpcomingNodes counts
    ``target - (ready + unready + longUnregistered)`` with or without a request, so the pods wait on
    the nodes already asked for; IsNodeGroupHealthy finds no readiness and ``MinNodes = target > 0``, so
    the group is not scaled further (kubetide used to adopt the target as a request: the group looked
    healthy, and its timeout reverted the target while fixNodeGroupSize lowered it again)."""
    h = two_groups()
    for i in range(5):
        h.add_pod(pod(f"p{i}"))
    h.run(0.0)
    assert h.cloud.groups["spot"].target == 2
    h.restart()
    result = h.run(30.0)
    assert len(h.cloud.calls_to("increase_size")) == 1, result.events
    h.add_pod(pod("more", 1800))
    result = h.run(40.0)
    assert h.cloud.calls_to("increase_size")[-1] == Call("increase_size", "general", (1,))
    assert h.ca is not None and not h.ca.registry.is_node_group_healthy("spot")
    # No request: nothing times out; the wrong size (first seen at 30s) is fixed after the provision time.
    assert "ScaleUpTimedOut" not in h.reasons(h.run(931.0))
    assert h.cloud.calls_to("decrease_target_size") == [Call("decrease_target_size", "spot", (-2,))]


def test_unneeded_nodes_get_the_soft_taint_and_timers_survive_a_restart_with_a_candidate_ttl() -> None:
    h = drain_setup(**{"node-deletion-candidate-ttl": 3600.0, "max-drain-parallelism": 0})
    h.run(0.0)
    soft = {
        n: t
        for n, node in h.nodes.items()
        for t in node.taints
        if t.key == "DeletionCandidateOfClusterAutoscaler"
    }
    assert set(soft) == {"n2", "n3"} and soft["n3"].effect == "PreferNoSchedule" and soft["n3"].value == "0"
    h.restart()
    h.run(300.0)
    result = h.run(610.0)  # unneeded since 0, restored from the taint: removable now
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("n3",)], result.unremovable


def test_without_a_candidate_ttl_a_restart_restarts_the_unneeded_timers() -> None:
    h = drain_setup(**{"max-drain-parallelism": 0})
    h.run(0.0)
    h.restart()
    h.run(300.0)
    h.run(610.0)
    assert h.cloud.calls_to("delete_nodes") == []  # no surprise deletion right after a restart
    h.run(910.0)
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("n3",)]


def test_template_from_real_nodes_is_reported_when_it_differs_and_kept_for_scale_from_zero() -> None:
    cloud = RecordingCloud().with_group("ng", 0, 5, target=1, template=template("ng", cpu=2000))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False}))
    h.add_node(node("n1", "ng", cpu=4000), "ng")
    result = h.run(0.0)
    mismatches = {e.data["resource"]: e for e in result.events if e.reason == "NodeTemplateMismatch"}
    assert set(mismatches) == {"allocatable.cpu", "capacity.cpu"}
    assert mismatches["allocatable.cpu"].data == {
        "group": "ng",
        "resource": "allocatable.cpu",
        "template": "2000",
        "observed": "4000",
    }
    # The group goes to zero; a pod that only fits the real machines still scales it up from zero.
    h.nodes.pop("n1")
    cloud.groups["ng"].instances.clear()
    cloud.groups["ng"].target = 0
    h.add_pod(pod("wide", 3000))
    h.run(10.0)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "ng", (1,))]


def test_enforce_node_group_min_size_raises_groups_below_min() -> None:
    cloud = RecordingCloud().with_group("ng", 2, 5, target=0, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"enforce-node-group-min-size": True}))
    result = h.run(0.0)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "ng", (2,))]
    assert result.stats.nodes_added == 2
    h.run(10.0)  # the request is open: nothing more
    assert len(h.cloud.calls_to("increase_size")) == 1


def test_a_daemonset_with_no_pod_anywhere_yet_still_takes_its_share_of_a_template() -> None:
    """The group is at zero and its DaemonSet has no pod yet: the template still carries the pod the
    DaemonSet would run there, so a pod that fits only an empty machine does not buy one."""
    from kubetide.model.pod import OwnerRef

    def run(with_daemonset: bool) -> list[Call]:
        cloud = RecordingCloud().with_group("big", 0, 5, template=template("big", cpu=4000))
        h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False}))
        agent = pod("agent-template", 3000, node_name="").evolve(
            owners=(OwnerRef("DaemonSet", "agent", "uid-agent", True),), phase="Pending"
        )
        if with_daemonset:
            h.daemonsets.append(agent)
        h.add_pod(pod("wide", 2000))
        h.run(0.0)
        return h.cloud.calls_to("increase_size")

    assert run(with_daemonset=False) == [Call("increase_size", "big", (1,))]
    assert run(with_daemonset=True) == []  # 4000m - 3000m of the DaemonSet's pod < 2000m


def test_allowed_scheduler_names_leave_other_schedulers_pods_out() -> None:
    """Upstream's listPods: with --allowed-scheduler-names, pods of other schedulers, pending or
    running, are not in the loop at all; --bypassed-scheduler-names must be a subset of it."""
    from kubetide.cluster.flags import parse_flags

    h = two_groups(**{"allowed-scheduler-names": ["default-scheduler"]})
    h.add_pod(pod("mine", 500))
    h.add_pod(pod("theirs", 500).evolve(scheduler_name="volcano"))
    result = h.run(0.0)
    triggered = sorted(e.object for e in result.events if e.reason == "TriggeredScaleUp")
    assert triggered == ["Pod/default/mine"]
    h = two_groups(**{"allowed-scheduler-names": ["volcano"]})
    h.add_pod(pod("mine", 500))
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == []  # default-scheduler's pods are not listed
    _, problems = parse_flags({"allowed-scheduler-names": ["a"], "bypassed-scheduler-names": ["b"]})
    assert problems == [
        (
            "bypassed-scheduler-names",
            "should be a subset of --allowed-scheduler-names: b not included in --allowed-scheduler-names",
        )
    ]


def test_the_planner_stops_simulating_once_it_found_enough_unneeded_nodes() -> None:
    # 30 empty nodes, N = --max-scale-down-parallelism = 2: upstream's planner looks for at most
    # min(unneeded + 2N, N x floor(U / I) + N) removable nodes per loop. First loop: 0 + 4. Then the
    # limit grows by 2N a loop (I = 10 s), up to 2 x 60 + 2 = 122, beyond the 30 here.
    cloud = RecordingCloud().with_group("ng", 1, 40, target=30, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"max-scale-down-parallelism": 2}))
    for i in range(30):
        h.add_node(node(f"n{i:02d}", "ng"), "ng")
    first = h.run(0.0)
    assert len(first.unneeded) == 4
    skipped = [n for n, why in first.not_candidates.items() if why.startswith("not simulated this loop")]
    assert len(skipped) == 26
    assert len(h.run(10.0).unneeded) == 4 + 4  # the 4 first (tried first), and 4 more
    assert len(h.run(20.0).unneeded) == 8 + 4
    for t in (30.0, 40.0, 50.0, 60.0):
        result = h.run(t)
    assert len(result.unneeded) == 28
    assert len(h.run(70.0).unneeded) == 30  # the limit (32) no longer binds


def test_the_planner_limit_follows_the_shortest_interval_between_updates() -> None:
    cloud = RecordingCloud().with_group("ng", 1, 40, target=30, template=template("ng"))
    options = AutoscalingOptions.from_flags(
        {"max-scale-down-parallelism": 2, "scale-down-unneeded-time": 30.0}
    )
    h = Harness(cloud, options)
    for i in range(30):
        h.add_node(node(f"n{i:02d}", "ng"), "ng")
    assert h.ca is not None
    planner = h.ca.planner
    assert planner.unneeded_limit() == 4  # min(0 + 4, 2 x 1 + 2): I starts at U
    h.run(0.0)
    h.run(20.0)  # I = 20 s: N x floor(30 / 20) + N = 4
    assert planner.min_update_interval == 20.0 and planner.unneeded_limit() == 4
    h.run(25.0)  # I = 5 s: 2 x 6 + 2 = 14 caps 4 + 4
    assert planner.unneeded_limit() == min(len(planner.unneeded) + 4, 14)


def test_nodes_whose_deletion_started_count_toward_the_next_limit() -> None:
    # Upstream's unneeded list keeps them until its next update; kubetide forgets them at once.
    cloud = RecordingCloud().with_group("ng", 1, 40, target=30, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"max-scale-down-parallelism": 2}))
    for i in range(30):
        h.add_node(node(f"n{i:02d}", "ng"), "ng")
    h.run(0.0)
    assert h.ca is not None
    planner = h.ca.planner
    assert planner.unneeded_limit() == 4  # I = U until a second update: N x 1 + N
    assert len(h.run(10.0).unneeded) == 8
    planner.forget(["n00", "n01", "elsewhere"])
    assert len(planner.unneeded) == 6 and planner.unneeded_limit() == 8 + 4
    assert len(h.run(20.0).unneeded) == 12
    assert planner.unneeded_limit() == 12 + 4
