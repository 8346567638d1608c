"""The simulator's scheduler: least-allocated placement, reproducible for a seed, and kube-scheduler's
messages for pods that fit nowhere."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling import scheduler as scheduler_module
from kubetide.scheduling.scheduler import Scheduler, queue_order
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import node, owner, pod


def test_prefers_the_least_allocated_node() -> None:
    snap = ClusterSnapshot(
        [node("busy", cpu=2000), node("idle", cpu=2000)], [pod("x", 1500, node_name="busy")]
    )
    result = Scheduler().schedule(snap, [pod("p", 200)])
    assert [(p.pod.name, p.node) for p in result.placements] == [("p", "idle")]


def test_spreads_a_batch_and_binds_into_the_snapshot() -> None:
    snap = ClusterSnapshot([node(f"n{i}", cpu=1000) for i in range(3)])
    result = Scheduler().schedule(snap, [pod(f"p{i}", 400) for i in range(6)])
    assert sorted(p.node for p in result.placements) == ["n0", "n0", "n1", "n1", "n2", "n2"]
    assert snap.requested[:, snap.column("cpu")].tolist() == [800, 800, 800]


def test_same_seed_same_placements() -> None:
    def run(seed: int) -> list[str]:
        snap = ClusterSnapshot([node(f"n{i}") for i in range(8)])
        return [
            p.node for p in Scheduler(seed).schedule(snap, [pod(f"p{i}", 100) for i in range(20)]).placements
        ]

    assert run(7) == run(7)


def test_unschedulable_message_follows_kube_scheduler() -> None:
    batch = Taint("dedicated", "batch", "NoSchedule")
    snap = ClusterSnapshot(
        [node(f"n{i}", cpu=1000) for i in range(3)] + [node(f"t{i}", taints=(batch,)) for i in range(2)]
    )
    result = Scheduler().schedule(snap, [pod(f"p{i}", 600) for i in range(4)])
    assert len(result.placements) == 3
    [pending] = result.unschedulable
    assert pending.message == (
        "0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: batch}, 3 Insufficient cpu. "
        "preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, "
        "3 No preemption victims found for incoming pod."
    )


def test_preemption_part_when_victims_would_not_help_and_when_they_would() -> None:
    snap = ClusterSnapshot([node("n0", cpu=1000)], [pod("low", 500, node_name="n0", priority=0)])
    # evicting "low" leaves 1000m: not enough for 1500m, so upstream reports the remaining shortage
    [big] = Scheduler().schedule(snap, [pod("big", 1500, priority=10)]).unschedulable
    assert (
        big.message
        == "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu."
    )
    # evicting would make room: upstream nominates the node and prints no preemption part
    [mid] = Scheduler().schedule(snap, [pod("mid", 800, priority=10)]).unschedulable
    assert mid.message == "0/1 nodes are available: 1 Insufficient cpu."


def test_queue_order_is_priority_then_age() -> None:
    a, b, c = pod("a", priority=1), pod("b", priority=5), pod("c", priority=1)
    object.__setattr__(a, "creation_time", 20.0)
    object.__setattr__(c, "creation_time", 10.0)
    assert [p.name for p in queue_order([a, b, c])] == ["b", "c", "a"]


@settings(max_examples=60, deadline=None)
@given(
    node_cpus=st.lists(st.sampled_from([1000, 2000, 4000]), min_size=1, max_size=12),
    groups=st.lists(
        st.tuples(st.sampled_from([100, 250, 500, 900]), st.integers(1, 25)), min_size=1, max_size=4
    ),
    seed=st.integers(0, 5),
)
def test_kept_scores_choose_exactly_as_rescoring_every_pod(
    node_cpus: list[int], groups: list[tuple[int, int]], seed: int
) -> None:
    """The back-to-back fast path (scores kept and refreshed for one node) places identically."""
    pods = [
        pod(f"g{g}-{k}", cpu=cpu, owners=owner(f"rs-{g}"))
        for g, (cpu, count) in enumerate(groups)
        for k in range(count)
    ]

    def placements(fast: bool) -> list[tuple[str, str]]:
        snap = ClusterSnapshot([node(f"n{i}", cpu=c) for i, c in enumerate(node_cpus)])
        with patch.object(scheduler_module, "_resources_only", lambda *a: fast and original(*a)):
            result = Scheduler(seed=seed).schedule(snap, pods)
        return [(p.pod.name, p.node) for p in result.placements]

    original = scheduler_module._resources_only
    assert placements(True) == placements(False)


@settings(max_examples=150)
@given(
    nodes=st.lists(
        st.tuples(st.sampled_from([1000, 2000, 4000]), st.sampled_from(["a", "b"]), st.booleans()),
        min_size=1,
        max_size=10,
    ),
    picks=st.lists(st.tuples(st.integers(0, 5), st.sampled_from([100, 300, 700])), min_size=1, max_size=60),
    seed=st.integers(0, 5),
)
def test_interleaved_groups_choose_exactly_as_rescoring_every_pod(
    nodes: list[tuple[int, str, bool]], picks: list[tuple[int, int]], seed: int
) -> None:
    """Groups resumed after other groups' pods (kept scores refreshed for every node bound since)
    place identically, with node selectors, taints, host ports and an anti-affinity pod mixed in."""
    from kubetide.model.scheduling_terms import PodAffinityTerm

    from .builders import selector

    taint = Taint("dedicated", "batch", "NoSchedule")
    pods = []
    for k, (g, cpu) in enumerate(picks):
        kwargs: dict[str, object] = {}
        if g == 1:
            kwargs["node_selector"] = {"pool": "a"}
        if g == 2:
            kwargs["ports"] = (8080,)
        if g == 3 and k % 7 == 0:
            kwargs["anti"] = (PodAffinityTerm(selector(app="x"), "kubernetes.io/hostname"),)
            kwargs["labels"] = {"app": "x"}
        pods.append(pod(f"g{g}-{k}", cpu=cpu, owners=owner(f"rs-{g}-{cpu}"), **kwargs))  # type: ignore[arg-type]

    def placements(fast: bool) -> list[tuple[str, str]]:
        snap = ClusterSnapshot(
            [
                node(f"n{i}", cpu=c, labels={"pool": p}, taints=(taint,) if tainted else ())
                for i, (c, p, tainted) in enumerate(nodes)
            ]
        )
        with patch.object(scheduler_module, "_resources_only", lambda *a: fast and original(*a)):
            result = Scheduler(seed=seed).schedule(snap, pods)
        return [(p.pod.name, p.node) for p in result.placements]

    original = scheduler_module._resources_only
    assert placements(True) == placements(False)
