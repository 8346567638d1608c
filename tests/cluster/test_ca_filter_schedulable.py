"""The filter of schedulable pods (CA's ``filterOutSchedulablePodListProcessor`` and ``HintingSimulator``),
and what it means for a scale-up in flight: the pods its upcoming nodes hold need no second scale-up.

Issue 23 item 4: on the benchmark world (pending pods of ten sizes) CA 1.31 adds 97 nodes at 1,000 nodes
and nothing after; kubetide added 97, then 2, then 1, because it placed the pending pods on the upcoming
nodes as kube-scheduler spreads them (``LeastAllocated``), which leaves pods over that a first fit
places, and redistributed them each loop (no hints), so a later loop found a pod that fit nowhere.
"""

from __future__ import annotations

from ca_loop_harness import Harness, node, pod, template

from kubetide.bench import ca
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort


def _node(name: str, cpu: int) -> NodeView:
    alloc = Resources({"cpu": cpu, "memory": 2**34, "pods": 110})
    return NodeView(name, labels={"kubernetes.io/hostname": name}, allocatable=alloc, capacity=alloc)


def _pod(name: str, cpu: int, *, priority: int = 0, owner: str = "rs-a", uid: str = "") -> Pod:
    return Pod(
        name,
        uid=uid or f"uid-{name}",
        labels={"app": owner},
        owners=(OwnerRef("ReplicaSet", owner, f"uid-{owner}", True),),
        containers=(Container("c", Resources({"cpu": cpu})),),
        priority=priority,
    )


def _increases(cloud: RecordingCloud) -> int:
    total = sum(int(c.args[0]) for c in cloud.calls if c.method == "increase_size")  # type: ignore[call-overload]
    cloud.calls.clear()
    return total


def test_higher_priority_pods_are_placed_first() -> None:
    """filter_out_schedulable.go filterOutSchedulableByPacking: ``sort.Slice`` by PodPriority, descending."""
    snap = ClusterSnapshot([_node("n1", 1000)])
    low = _pod("low", 800, owner="rs-low")
    high = _pod("high", 800, priority=100, owner="rs-high")
    placed = HintingSimulator().try_schedule(snap, [low, high])
    assert placed == [high]


def test_a_hinted_pod_keeps_its_node_in_the_next_call() -> None:
    """hinting_simulator.go TrySchedulePods: findNodeWithHints before findNode; hints.go DropOld keeps
    the hints of the previous call."""
    sim = HintingSimulator()
    nodes = [_node("n1", 1000), _node("n2", 1000)]
    first = ClusterSnapshot(nodes)
    first.add_pod(_pod("other", 900, owner="rs-x"), 0)  # n1 full: the pod goes to n2
    p = _pod("p", 500)
    assert sim.try_schedule(first, [p]) == [p] and sim.hint(p) == "n2"
    second = ClusterSnapshot(nodes)  # n1 empty now: a first fit would take it, the hint keeps n2
    sim.try_schedule(second, [p])
    assert second.pods_on(second.index_of("n2")) == [p] and second.pods_on(second.index_of("n1")) == []
    # A hint not renewed by a call is forgotten after the next one.
    sim.try_schedule(ClusterSnapshot(), [])
    sim.try_schedule(ClusterSnapshot(), [])
    assert sim.hint(p) is None


def test_similar_pods_of_a_controller_are_not_tried_again() -> None:
    """similar_pods.go IsSimilarUnschedulable: once a controller's pod fits nowhere, its pods with the
    same spec and labels are skipped for the rest of the call, even where one would fit."""
    snap = ClusterSnapshot([_node("n1", 1000)])
    big = _pod("big", 1200)
    same_spec = _pod("again", 1200)
    other = _pod("other", 300, owner="rs-b")
    assert HintingSimulator().try_schedule(snap, [big, same_spec, other]) == [other]


def _added_per_loop(nodes: int, loops: int) -> list[int]:
    """The nodes each loop adds on the benchmark world of ``nodes`` nodes (nodes never arrive)."""
    world, cloud = ca.world(nodes)
    autoscaler = StaticAutoscaler(
        cloud, RecordingClusterPort.discarding(), AutoscalingOptions(), start_time=ca.NOW - 3600
    )
    added = []
    for k in range(loops):
        autoscaler.run_once(world, ca.NOW + 10.0 * k)
        added.append(_increases(cloud))
    return added


def test_upcoming_nodes_hold_the_pods_that_triggered_them_loop_after_loop() -> None:
    """Issue 23 item 4, scaled down: the benchmark world at 200 nodes (kubetide added 19, then 1, then 1).
    CA adds the estimate once; its upcoming nodes (``GetUpcomingNodes`` placeholders) take every pod."""
    assert _added_per_loop(200, 8) == [19, 0, 0, 0, 0, 0, 0, 0]


def test_benchmark_world_scales_up_once() -> None:
    """Issue 23 item 4 on the bench fixture itself (``kubetide.bench.ca``, 1,000 nodes, 1,000 pending):
    CA 1.31 adds 97 nodes in the first loop and nothing after."""
    assert _added_per_loop(1000, 4) == [97, 0, 0, 0]


def test_pending_pods_fill_existing_room_before_upcoming_nodes_in_the_loop() -> None:
    """A pod that fits on a node with room is not a reason to scale up (filter_out_schedulable.go)."""
    cloud = RecordingCloud().with_group("g", 0, 10, target=1, template=template("g"))
    h = Harness(cloud)
    h.add_node(node("g-1", "g"), "g")
    h.add_pod(pod("p", 500))
    h.run(0.0)
    assert cloud.calls_to("increase_size") == []
