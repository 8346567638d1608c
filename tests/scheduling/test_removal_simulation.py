"""Removal simulation: every pod must find a place elsewhere; accepted moves persist; removed nodes stop
being destinations; the check leaves the snapshot as it found it."""

from __future__ import annotations

import pytest

from kubetide.model.pod import Pod
from kubetide.scheduling import removal_simulation
from kubetide.scheduling.removal_simulation import RemovalOutcome, must_move, simulate_removals
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import node, owner, pod
from .reference import ref_remove


def cluster(loads: list[int], cpu: int = 1000, pod_cpu: int = 100) -> ClusterSnapshot:
    nodes = [node(f"n{i}", cpu=cpu, pods=110) for i in range(len(loads))]
    pods = [pod(f"n{i}-{k}", pod_cpu, 0, node_name=f"n{i}") for i, n in enumerate(loads) for k in range(n)]
    return ClusterSnapshot(nodes, pods)


def test_moves_persist_and_removed_nodes_are_not_destinations() -> None:
    # n0 and n1 hold 5 pods each; n2 has room for 5 only: n0 goes, n1 must stay.
    snap = cluster([5, 5, 5])
    check = simulate_removals(snap, ["n0", "n1"])
    assert check.removable == ("n0",)
    assert check.results[1].outcome is RemovalOutcome.NO_PLACE_TO_MOVE_PODS
    assert sum(len(pods) for _, pods in check.results[0].moves) == 5
    assert all(dest in ("n1", "n2") for dest, _ in check.results[0].moves)


def test_the_fill_near_the_cursor_wraps_and_lists_destinations_as_the_full_fill(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # s2's big pod goes to s4 (s0 has room for small pods only), so the cursor is at s5 when s5's
    # two small pods move: round robin from there wraps, s6 then s0. Both fills list s0 first.
    nodes = [node(f"s{i}", cpu=1000, pods=110) for i in range(7)]
    pods = [
        pod("fill0", 800, 0, node_name="s0"),
        pod("fill1", 1000, 0, node_name="s1"),
        pod("big", 900, 0, node_name="s2", owners=owner("big")),
        pod("fill3", 1000, 0, node_name="s3"),
        pod("small-a", 100, 0, node_name="s5", owners=owner("small")),
        pod("small-b", 100, 0, node_name="s5", owners=owner("small")),
        pod("fill6", 800, 0, node_name="s6"),
    ]
    full = simulate_removals(ClusterSnapshot(nodes, pods), ["s2", "s5"])
    monkeypatch.setattr(removal_simulation, "_NEAR", 1)
    monkeypatch.setattr(removal_simulation, "_NEAR_PER_POD", 2)
    near = simulate_removals(ClusterSnapshot(nodes, pods), ["s2", "s5"])
    assert near == full
    assert [(dest, [p.name for p in moved]) for dest, moved in near.results[1].moves] == [
        ("s0", ["small-a"]),
        ("s6", ["small-b"]),
    ]


def test_check_leaves_snapshot_unchanged_unless_kept() -> None:
    snap = cluster([2, 2, 2])
    before = snap.requested.tolist()
    simulate_removals(snap, ["n0", "n1"])
    assert snap.requested.tolist() == before and snap.num_active() == 3
    simulate_removals(snap, ["n0"], keep=True)
    assert not snap.has_node("n0") and sum(len(snap.pods_on(i)) for i in range(3)) == 6


def test_round_robin_spreads_pods_from_the_last_success() -> None:
    snap = cluster([3, 0, 0, 0])
    check = simulate_removals(snap, ["n0"])
    assert [(dest, len(pods)) for dest, pods in check.results[0].moves] == [("n1", 1), ("n2", 1), ("n3", 1)]


def test_daemonset_and_mirror_pods_do_not_need_a_place() -> None:
    snap = cluster([0, 10])
    ds = pod("ds", 900, owners=owner("agent", "DaemonSet"), node_name="n0")
    mirror = pod("static", 900, owners=(), annotations={"kubernetes.io/config.mirror": "x"}, node_name="n0")
    snap.add_pod(ds, 0)
    snap.add_pod(mirror, 0)
    assert not must_move(ds) and not must_move(mirror)
    assert simulate_removals(snap, ["n0"]).removable == ("n0",)


def test_destinations_can_be_restricted_and_cordoned_nodes_never_receive() -> None:
    snap = ClusterSnapshot(
        [node("a", cpu=1000), node("b", cpu=1000), node("c", cpu=1000, unschedulable=True)],
        [pod("p", 500, 0, node_name="a")],
    )
    assert simulate_removals(snap, ["a"], destinations=["c"]).removable == ()
    assert simulate_removals(snap, ["a"], destinations=["b"]).removable == ("a",)


def test_unknown_candidate() -> None:
    check = simulate_removals(cluster([1]), ["nope"])
    assert check.results[0].outcome is RemovalOutcome.NODE_NOT_FOUND


def test_constrained_pods_move_one_by_one() -> None:
    from kubetide.model.node import HOSTNAME_LABEL
    from kubetide.model.scheduling_terms import PodAffinityTerm

    from .builders import selector

    def db(name: str, where: str) -> Pod:
        return pod(
            name,
            labels={"app": "db"},
            anti=(PodAffinityTerm(selector(app="db"), HOSTNAME_LABEL),),
            node_name=where,
        )

    snap = ClusterSnapshot([node("a"), node("b"), node("c")], [db("d0", "a"), db("d1", "b")])
    check = simulate_removals(snap, ["a", "b"])
    assert check.removable == ("a",)  # d0 goes to c; then d1 has nowhere without a db pod
    assert list(check.removable) == ref_remove(snap, ["a", "b"], must_move)


def test_sd_shapes_small() -> None:
    # SD-1's shape at 1/10 scale: 30 % of the nodes at 24 pods, the rest at 56 (80 fit by cpu).
    loads = [24] * 3 + [56] * 7
    snap = cluster(loads, cpu=8000)
    candidates = ["n0", "n1", "n2"]
    assert simulate_removals(snap, candidates).removable == tuple(candidates)
    assert ref_remove(snap, candidates, must_move) == candidates


def test_drainability_rules_can_block_a_node() -> None:
    from kubetide.scheduling.drainability import DrainContext, drain_node

    snap = cluster([1, 0])
    snap.add_pod(pod("lonely", owners=(), node_name="n0"), 0)
    ctx = DrainContext(now=0.0)
    check = simulate_removals(snap, ["n0"], drain=lambda pods: drain_node(pods, ctx))
    assert check.results[0].outcome is RemovalOutcome.BLOCKED_BY_POD
    assert check.results[0].blocking == ("default/lonely", "NotReplicated")
    assert simulate_removals(snap, ["n1"], drain=lambda pods: drain_node(pods, ctx)).removable == ("n1",)
