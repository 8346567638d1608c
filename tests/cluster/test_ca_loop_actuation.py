"""The loop through the recording fake ClusterPort: single-taint writes, API failures that are reported
and never acted on by guess, the drain rules that need the controllers, and the driver."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.driver import ClusterAutoscalerDriver
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT, TO_BE_DELETED_TAINT
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import PortCall, RecordingClusterPort


def drain_setup(**flags: object) -> Harness:
    cloud = RecordingCloud().with_group("ng", 1, 10, target=3, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags(dict(flags)))
    for name in ("n1", "n2", "n3"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n1"))
    h.add_pod(pod("small", 200, node_name="n2"))
    return h


def test_min_replica_count_keeps_a_node_whose_replicaset_has_fewer_replicas_and_says_why() -> None:
    h = drain_setup(**{"min-replica-count": 2})
    h.controllers = {("ReplicaSet", "default", "web"): 1}
    h.run(0.0)
    result = h.run(610.0)
    assert result.unremovable["n2"] == "BlockedByPod"
    assert result.blocking_pods["n2"] == ("default/small", "MinReplicasReached")
    assert "n2" not in result.unneeded and h.evicted == []
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("n3",)]


def test_enough_replicas_let_the_node_drain() -> None:
    h = drain_setup(**{"min-replica-count": 2, "max-scale-down-parallelism": 1})
    h.nodes.pop("n3")
    h.cloud.groups["ng"].instances.pop("n3")
    h.cloud.groups["ng"].target = 2
    h.controllers = {("ReplicaSet", "default", "web"): 3}
    h.run(0.0)
    h.run(610.0)
    assert h.evicted == ["small"]


def test_a_pod_whose_controller_is_missing_blocks_its_node() -> None:
    h = drain_setup()
    h.controllers = {}  # listers know no ReplicaSet "web"
    h.run(0.0)
    result = h.run(610.0)
    assert result.blocking_pods["n2"] == ("default/small", "ControllerNotFound")


def test_taints_are_single_adds_and_removes_that_keep_other_taints() -> None:
    h = drain_setup(**{"max-drain-parallelism": 0})
    foreign = Taint("example.com/maintenance", "soon", "NoSchedule")
    h.nodes["n3"] = replace(h.nodes["n3"], taints=(foreign,))
    h.run(0.0)
    adds = h.api.calls_to("add_node_taint")
    assert {c.target for c in adds} == {"n2", "n3"}
    assert all(isinstance(c.args[0], Taint) and c.args[0].key == DELETION_CANDIDATE_TAINT for c in adds)
    h.run(610.0)
    assert PortCall("add_node_taint", "n3", (Taint(TO_BE_DELETED_TAINT, "610", "NoSchedule"),)) in h.api.calls
    # The foreign taint survived every write CA made to n3 (until the cloud deleted the node).
    assert all(foreign in taints for name, taints in h.taint_calls if name == "n3")


def test_a_to_be_deleted_taint_the_api_refuses_means_no_drain_and_no_delete() -> None:
    h = drain_setup(**{"max-drain-parallelism": 0})
    h.run(0.0)
    h.api.with_failure("add_node_taint", "n3", times=1)
    result = h.run(610.0)
    failed = [e for e in result.events if e.reason == "ScaleDownFailed"]
    assert failed and failed[0].type == "Warning" and failed[0].object == "Node/n3"
    assert h.cloud.calls_to("delete_nodes") == []
    assert result.metrics is not None and result.metrics.api_errors == 1
    assert "ScaleDownEmpty" not in h.reasons(result)
    # Not forgotten: once the API answers again (after the failure cooldown), the node goes.
    h.run(800.0)
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("n3",)]


def test_an_eviction_the_api_fails_waits_like_a_pdb_and_the_loop_goes_on() -> None:
    h = drain_setup()
    h.nodes.pop("n3")
    h.cloud.groups["ng"].instances.pop("n3")
    h.cloud.groups["ng"].target = 2
    h.run(0.0)
    h.api.with_failure("evict", times=1)
    h.run(610.0)  # taints n2; its drain (5 s later, --node-delete-delay-after-taint) meets the API error
    assert h.deletion_passes == [615.0]
    assert h.cloud.calls_to("delete_nodes") == []  # not deleted with a pod of unknown fate
    after = h.run(620.0)  # retried at 625 (every 10 s from the drain's start): accepted
    assert after.metrics is not None and after.metrics.api_errors == 1  # counted by the next loop
    assert h.evicted == ["small"] and h.deletion_passes == [615.0, 625.0]
    h.run(630.0)  # the pod is gone at the next look
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("n2",)]


def test_metrics_count_what_the_loop_did() -> None:
    h = drain_setup(**{"max-drain-parallelism": 0})
    h.run(0.0)
    result = h.run(610.0)  # n3 is tainted, and deleted 5 s later (--node-delete-delay-after-taint)
    m = result.metrics
    assert m is not None
    assert m.scaled_down_nodes == {} and m.node_groups == 1 and m.cluster_safe_to_autoscale
    assert m.nodes_by_state["ready"] == 3 and m.unneeded_nodes == 1  # n2 stays unneeded
    m = h.run(620.0).metrics
    assert m is not None and m.scaled_down_nodes == {"empty": 1}  # the deletion, counted by the next loop
    m = h.run(630.0).metrics
    assert m is not None and m.scaled_down_nodes == {}  # counted once
    assert result.status is not None and result.status.cluster_wide.health.status == "Healthy"


class _Source:
    def __init__(self, h: Harness) -> None:
        self.h = h

    def world(self) -> World:
        return self.h.world()


def test_the_driver_runs_the_loop_emits_every_event_through_the_port_and_counts() -> None:
    h = drain_setup(**{"max-drain-parallelism": 0})
    api: RecordingClusterPort = h.api
    driver = ClusterAutoscalerDriver(_Source(h), h.cloud, api, h.options)
    driver.tick(0.0)
    result = driver.tick(610.0)
    assert result.deletions_due_at == 615.0
    later = driver.deletions(615.0)  # what the runner calls once --node-delete-delay-after-taint passed
    assert [(t, r, o) for t, r, o, _ in api.events][-3:] == [
        (e.type, e.reason, e.object) for e in (*result.events, *later.events)
    ][-3:]
    assert len(api.events) == len(result.events) + len(later.events) and driver.loops == 2
    assert driver.stats.nodes_removed == 1
    driver.restart(620.0)
    driver.tick(630.0)
    assert driver.stats.nodes_removed == 1 and driver.loops == 3


def test_group_level_events_go_on_the_status_config_map_in_the_api() -> None:
    h = drain_setup(**{"namespace": "autoscaling"})
    driver = ClusterAutoscalerDriver(_Source(h), h.cloud, h.api, h.options)
    assert driver.api_object("NodeGroup/ng") == "ConfigMap/autoscaling/cluster-autoscaler-status"
    assert driver.api_object("ConfigMap/kube-system/cluster-autoscaler-status") == (
        "ConfigMap/autoscaling/cluster-autoscaler-status"
    )
    assert driver.api_object("Node/n1") == "Node/n1"


def _pod_events(h: Harness, reason: str) -> list[tuple[str, str, str, dict[str, object]]]:
    return [
        (e.type, e.object, e.message, dict(e.data))
        for e in h.events
        if e.reason == reason and e.object.startswith("Pod/")
    ]


def test_each_eviction_is_announced_on_its_pod_once_and_a_give_up_too() -> None:
    """CA's evictor: Normal ScaleDown "deleting pod for node scale down" on the pod, and Warning
    ScaleDownFailed "failed to delete pod for ScaleDown" when it gives the pod up."""
    h = drain_setup(**{"max-scale-down-parallelism": 1})
    h.nodes.pop("n3")
    h.cloud.groups["ng"].instances.pop("n3")
    h.cloud.groups["ng"].target = 2
    h.refuse_evictions = True
    h.run(0.0)
    h.run(610.0)
    h.run(700.0)  # the eviction is retried: not announced again
    assert _pod_events(h, "ScaleDown") == [
        (
            "Normal",
            "Pod/default/small",
            "deleting pod for node scale down",
            {"group": "ng", "node": "n2", "pod": "default/small"},
        )
    ]
    h.run(740.0)  # past --max-pod-eviction-time
    assert _pod_events(h, "ScaleDownFailed") == [
        (
            "Warning",
            "Pod/default/small",
            "failed to delete pod for ScaleDown",
            {"group": "ng", "node": "n2", "pod": "default/small"},
        )
    ]
    # Later the node is chosen again: a new drain announces its eviction again.
    h.refuse_evictions = False
    for t in range(750, 1800, 10):
        h.run(float(t))
    assert len(_pod_events(h, "ScaleDown")) == 2 and h.evicted == ["small"]


def test_a_deletion_goes_on_when_the_world_does_not_show_its_taint_yet() -> None:
    """A dry run drops the taint write (and a watch may lag): the deletion this process started still
    goes on at the next loop once --node-delete-delay-after-taint has passed."""
    from kubetide.cluster.autoscaler import StaticAutoscaler

    h = drain_setup()
    ca = StaticAutoscaler(
        h.cloud, RecordingClusterPort.discarding(), h.options
    )  # writes dropped: the taint never shows
    ca.run_once(h.world(), 0.0)
    first = ca.run_once(h.world(), 610.0)
    assert "marked the node as toBeDeleted/unschedulable" in [e.message for e in first.events]
    assert h.cloud.calls_to("delete_nodes") == []  # waiting out the 5 s delay
    ca.run_once(h.world(), 620.0)
    assert sorted(c.args for c in h.cloud.calls_to("delete_nodes")) == [("n2",), ("n3",)]


def _cordons(h: Harness) -> list[tuple[str, object]]:
    return [(c.target, c.args[0]) for c in h.api.calls_to("set_node_unschedulable")]


def test_cordon_node_before_terminating_cordons_with_the_taint_and_uncordons_a_failed_drain() -> None:
    """utils/taints MarkToBeDeleted(node, client, cordonNode) sets ``Spec.Unschedulable = true`` with the
    taint; CleanToBeDeleted(..., cordonNode) sets it back to false. The default is CA 1.31's false
    (main.go) and 1.36's true (config/flags/flags.go), so it follows --ca-compatibility-version."""
    for version, cordoned in (("1.31", False), ("1.36", True)):
        h = drain_setup(**{"ca-compatibility-version": version, "max-pod-eviction-time": 0.0})
        h.nodes.pop("n3")
        h.cloud.groups["ng"].instances.pop("n3")
        h.cloud.groups["ng"].target = 2
        h.refuse_evictions = True
        h.run(0.0)
        h.run(610.0)  # n2 tainted, its eviction refused at 615
        h.run(620.0)  # the drain fails at 625
        assert any(e.reason == "ScaleDownFailed" for e in h.events)
        assert _cordons(h) == ([("n2", True), ("n2", False)] if cordoned else []), version
        assert not h.nodes["n2"].unschedulable


def test_a_refused_cordon_is_a_refused_taint() -> None:
    """MarkToBeDeleted writes the taint and Spec.Unschedulable in one update: either failing fails the
    taint (taintNodesSync), and the node is left as it was."""
    h = drain_setup(**{"cordon-node-before-terminating": True, "max-drain-parallelism": 0})
    h.run(0.0)
    h.api.with_failure("set_node_unschedulable", "n3", times=1)
    result = h.run(610.0)
    assert result.scale_down_result == "Error"
    assert not any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n3"].taints)
    assert h.cloud.calls_to("delete_nodes") == []
