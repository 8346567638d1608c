"""Atomic (ZeroOrMaxNodeScaling) groups are deleted as CA 1.31's actuator deletes them: all of the
group's nodes in one ``DeleteNodes`` call once every one is drained, or none of them
(``core/scaledown/actuation/group_deletion_scheduler.go`` ScheduleDeletion, addToBatcher,
AbortNodeDeletion; ``delete_in_batch.go`` deleteNodesFromCloudProvider; ``actuator.go`` taintNodesSync).
"""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.testing.cloud import RecordingCloud

ATOMIC = replace(AutoscalingOptions().node_group_defaults(), zero_or_max_node_scaling=True)
TAINTED = 610.0  # the loop that finds the slice unneeded for longer than 10 minutes
DRAIN = TAINTED + 5.0


def slice_world(graces: tuple[int | None, ...] = (0, 30, 60), **flags: object) -> Harness:
    """The atomic group "slice": three nodes, each with one small pod (terminationGracePeriodSeconds from
    ``graces``, None: an empty node), all movable to "keep"."""
    cloud = (
        RecordingCloud()
        .with_group("slice", 0, 3, target=3, template=template("slice"), options=ATOMIC)
        .with_group("ng", 1, 10, target=1, template=template("ng"))
    )
    h = Harness(cloud, AutoscalingOptions.from_flags(dict(flags)))
    h.api.graceful = True
    h.add_node(node("keep", "ng", cpu=8000), "ng")
    h.add_pod(pod("anchor", 4100, node_name="keep", labels={"app": "anchor"}))
    for i, grace in enumerate(graces):
        h.add_node(node(f"a{i}", "slice"), "slice")
        if grace is not None:
            h.add_pod(replace(pod(f"p{i}", 100, node_name=f"a{i}"), termination_grace_s=grace))
    h.run(0.0)
    return h


def run_to(h: Harness, end: float, start: float = TAINTED) -> None:
    t = start
    while t <= end:
        h.run(t)
        t += 10.0


def failures(h: Harness) -> dict[str, str]:
    return {
        e.object: e.message
        for e in h.events
        if e.reason == "ScaleDownFailed" and e.object.startswith("Node/")
    }


def tainted(h: Harness) -> list[str]:
    return sorted(n for n, v in h.nodes.items() if any(t.key == TO_BE_DELETED_TAINT for t in v.taints))


def test_the_group_is_deleted_in_one_call_once_its_last_node_is_drained() -> None:
    """addToBatcher queues the drained nodes until ``len(nodeQueue) >= batchSize`` (the group's size),
    then one DeleteNodes for all: a0's pod is gone at 615, a1's at 645, a2's at 675."""
    h = slice_world()
    run_to(h, 660.0)  # and the deletion rounds up to 665
    assert h.cloud.calls_to("delete_nodes") == [] and tainted(h) == ["a0", "a1", "a2"]
    h.run(670.0)
    assert [sorted(c.args) for c in h.cloud.calls_to("delete_nodes")] == [["a0", "a1", "a2"]]
    assert h.deletion_passes[-1] == DRAIN + 60.0
    removed = [e.object for e in h.events if e.message == "nodes removed by cluster autoscaler"]
    assert sorted(removed) == ["Node/a0", "Node/a1", "Node/a2"]


def test_one_failed_drain_fails_the_whole_group() -> None:
    """AbortNodeDeletion: the node whose drain failed, and every other node of the group, are cleaned
    up ("couldn't scale down other nodes in this node group"); nothing is deleted."""
    h = slice_world(graces=(0, 0, 0), **{"max-pod-eviction-time": 30.0})
    h.api.refuse_pods = {"p1"}
    run_to(h, 660.0)
    assert h.cloud.calls_to("delete_nodes") == [] and tainted(h) == []
    got = failures(h)
    assert got["Node/a1"] == "failed to drain and delete node: failed to evict pods from node a1: default/p1"
    for other in ("Node/a0", "Node/a2"):
        assert (
            got[other]
            == "failed to drain and delete node: couldn't scale down other nodes in this node group"
        )


def test_a_failed_delete_nodes_call_fails_every_node_of_the_batch() -> None:
    """deleteNodesAndRegisterStatus: DeleteNodes' error is every node's (CleanUpAndRecordFailedScaleDownEvent
    each, the taint removed)."""
    h = slice_world(graces=(None, None, None))
    h.cloud.with_failure("delete_nodes", group="slice")
    run_to(h, 620.0)
    assert [sorted(c.args) for c in h.cloud.calls_to("delete_nodes")] == [["a0", "a1", "a2"]]
    got = failures(h)
    assert sorted(got) == ["Node/a0", "Node/a1", "Node/a2"]
    assert all(
        m
        == "failed to delete empty node: failed to delete nodes from group slice: delete_nodes failed (injected)"
        for m in got.values()
    )
    assert tainted(h) == []


def test_a_refused_taint_untaints_the_batch_and_starts_nothing() -> None:
    """taintNodesSync: a node whose taint fails cleans the taints already applied in its batch and
    StartDeletion returns ScaleDownError (lastScaleDownFailTime set), so an atomic group is never half
    deleted."""
    h = slice_world(graces=(None, None, None))
    h.api.with_failure("add_node_taint", "a1", times=1)
    result = h.run(TAINTED)
    assert result.scale_down_result == "Error" and result.error is not None
    to_be_deleted = [c for c in h.api.calls_to("add_node_taint") if c.args[0].key == TO_BE_DELETED_TAINT]
    assert [c.target for c in to_be_deleted] == ["a0", "a1"]
    cleaned = [c.target for c in h.api.calls_to("remove_node_taint") if c.args == (TO_BE_DELETED_TAINT,)]
    assert cleaned == ["a0"]
    assert tainted(h) == [] and h.cloud.calls_to("delete_nodes") == []
    # --scale-down-delay-after-failure (3m) holds the next attempt; then the group goes whole.
    assert h.run(TAINTED + 170.0).scale_down_result == "InCooldown"
    run_to(h, TAINTED + 200.0, TAINTED + 190.0)
    assert [sorted(c.args) for c in h.cloud.calls_to("delete_nodes")] == [["a0", "a1", "a2"]]


def test_groups_that_are_not_atomic_delete_each_node_when_it_is_ready() -> None:
    h = slice_world(**{"max-drain-parallelism": 3})
    h.cloud.groups["slice"].options = replace(ATOMIC, zero_or_max_node_scaling=False)
    run_to(h, 690.0)
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("a0",), ("a1",), ("a2",)]
