"""The removal memo: attempts replayed from the last loop give exactly what simulating afresh gives,
loop after loop, whatever changed in between (pods, nodes added or removed so slots shift, cordons,
the candidates' order, the destinations)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint, Toleration
from kubetide.scheduling import removal_simulation
from kubetide.scheduling.kept import SnapshotKeeper
from kubetide.scheduling.removal_simulation import RemovalMemo, simulate_removals
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import GI, MI, ZONE_LABEL, node, owner, pod
from .reference import ref_fits
from .test_properties import SETTINGS

_SHAPES = [(100, 128 * MI), (250, 512 * MI), (500, 1 * GI)]
_TAINT = Taint("dedicated", "batch", "NoSchedule")


@contextmanager
def _near(first: int, per_pod: int) -> Iterator[None]:
    """Small near-walk windows, so that small clusters take the walk (and the memo records it)."""
    saved = removal_simulation._NEAR, removal_simulation._NEAR_PER_POD
    removal_simulation._NEAR, removal_simulation._NEAR_PER_POD = first, per_pod
    try:
        yield
    finally:
        removal_simulation._NEAR, removal_simulation._NEAR_PER_POD = saved


class _Cluster:
    def __init__(self, nodes: list[NodeView]) -> None:
        self.nodes = nodes
        self.pods: dict[str, list[Pod]] = {n.name: [] for n in nodes}
        self.made = 0

    def snapshot(self) -> ClusterSnapshot:
        return ClusterSnapshot(self.nodes, [p for n in self.nodes for p in self.pods[n.name]])

    def add_pod(self, data: Any) -> None:
        rs = data.draw(st.integers(0, 2))
        cpu, mem = _SHAPES[rs]
        self.made += 1
        name = self.nodes[data.draw(st.integers(0, len(self.nodes) - 1))].name
        tolerates = (Toleration("dedicated", "Exists"),) if rs == 2 else ()
        p = pod(
            f"p{self.made}",
            cpu,
            mem,
            labels={"app": f"rs{rs}"},
            owners=owner(f"rs{rs}"),
            node_name=name,
            tolerations=tolerates,
        )
        snap = self.snapshot()
        if ref_fits(snap, p, snap.index_of(name)):
            self.pods[name] = [*self.pods[name], p]

    def change(self, data: Any) -> None:
        what = data.draw(
            st.sampled_from(
                ["none", "none", "add", "add", "remove", "drop", "insert", "cordon", "taint", "rotate"]
            )
        )
        names = [n.name for n in self.nodes]
        if what == "add":
            self.add_pod(data)
        elif what == "remove":
            crowded = [n for n in names if self.pods[n]]
            if crowded:
                name = data.draw(st.sampled_from(crowded))
                k = data.draw(st.integers(0, len(self.pods[name]) - 1))
                self.pods[name] = self.pods[name][:k] + self.pods[name][k + 1 :]
        elif what == "drop" and len(self.nodes) > 3:
            k = data.draw(st.integers(0, len(self.nodes) - 1))
            del self.pods[self.nodes[k].name]
            del self.nodes[k]
        elif what == "insert":
            self.made += 1
            k = data.draw(st.integers(0, len(self.nodes)))
            new = node(f"x{self.made}", cpu=data.draw(st.sampled_from([1000, 2000])), pods=8)
            self.nodes.insert(k, new)
            self.pods[new.name] = []
        elif what == "cordon":
            k = data.draw(st.integers(0, len(self.nodes) - 1))
            self.nodes[k] = replace(self.nodes[k], unschedulable=not self.nodes[k].unschedulable)
        elif what == "taint":  # another node class, still a destination: for the pods that tolerate it
            k = data.draw(st.integers(0, len(self.nodes) - 1))
            self.nodes[k] = replace(self.nodes[k], taints=() if self.nodes[k].taints else (_TAINT,))
        elif what == "rotate":  # a world may list its nodes in another order: the walk wraps elsewhere
            k = data.draw(st.integers(1, len(self.nodes)))
            self.nodes[:] = self.nodes[k:] + self.nodes[:k]


@SETTINGS
@given(st.data())
def test_replayed_attempts_are_what_a_fresh_simulation_finds(data: Any) -> None:
    cluster = _Cluster([node(f"n{i}", cpu=1000 * data.draw(st.integers(1, 2)), pods=8) for i in range(12)])
    for _ in range(data.draw(st.integers(10, 40))):
        cluster.add_pod(data)
    memo, keeper = RemovalMemo(), SnapshotKeeper()
    with _near(1, data.draw(st.sampled_from([1, 2, 3]))):
        for _ in range(data.draw(st.integers(2, 8))):
            cluster.change(data)
            names = [n.name for n in cluster.nodes]
            candidates = data.draw(st.permutations(names)) if data.draw(st.booleans()) else names
            candidates = candidates[: data.draw(st.integers(0, len(candidates)))]
            destinations = None
            if data.draw(st.integers(0, 3)) == 0:
                destinations = [n for n in names if data.draw(st.integers(0, 5))]
            kept = keeper.snapshot(cluster.nodes, [cluster.pods[n] for n in names])
            replayed = simulate_removals(kept, candidates, destinations, memo=memo)
            fresh = simulate_removals(cluster.snapshot(), candidates, destinations)
            assert replayed == fresh


def test_an_unchanged_loop_replays_every_removable_attempt() -> None:
    # Twelve half-full nodes: each one's pods move to the nodes after it, one per node (the walk).
    cluster = _Cluster([node(f"n{i}", cpu=1000, pods=8) for i in range(12)])
    for i, n in enumerate(cluster.nodes):
        cluster.pods[n.name] = [
            pod(f"{n.name}-{k}", 100, 128 * MI, owners=owner(f"rs{k}"), node_name=n.name)
            for k in range(i % 3)
        ]
    memo = RemovalMemo()
    names = [n.name for n in cluster.nodes]
    with _near(4, 2):
        first = simulate_removals(cluster.snapshot(), names[:6], memo=memo)
        walked = memo.walked
        second = simulate_removals(cluster.snapshot(), names[:6], memo=memo)
    assert first == second
    assert first.removable == tuple(names[:6])
    assert (memo.walked, memo.replayed) == (walked, 6)


def test_a_walk_that_would_wrap_elsewhere_is_walked_again() -> None:
    # a's pod goes to n2, so b's walk starts at n3: its two pods take n5 and, past the last node, n0,
    # so the first pod goes to n0 (the lower slot). With the same nodes listed from n1 on, the very
    # same walk no longer wraps: the first pod goes to n5. Replaying the pairing would be wrong.
    used = {"n0": 800, "n2": 500, "n4": 1000, "n5": 900, "n6": 1000}
    cluster = _Cluster([node(f"n{i}", cpu=1000, pods=8) for i in range(7)])
    for name, cpu in used.items():
        cluster.pods[name] = [pod(f"fill-{name}", cpu, 0, owners=owner(f"fill-{name}"), node_name=name)]
    cluster.pods["n1"] = [pod("a", 500, 0, owners=owner("a"), node_name="n1")]
    cluster.pods["n3"] = [pod(f"b{k}", 100, 0, owners=owner("b"), node_name="n3") for k in range(2)]
    memo = RemovalMemo()
    with _near(5, 1):
        first = simulate_removals(cluster.snapshot(), ["n1", "n3"], memo=memo)
        assert [(d, [p.name for p in ps]) for d, ps in first.results[1].moves] == [
            ("n0", ["b0"]),
            ("n5", ["b1"]),
        ]
        cluster.nodes[:] = cluster.nodes[1:] + cluster.nodes[:1]
        second = simulate_removals(cluster.snapshot(), ["n1", "n3"], memo=memo)
    assert second == simulate_removals(cluster.snapshot(), ["n1", "n3"])
    assert [(d, [p.name for p in ps]) for d, ps in second.results[1].moves] == [
        ("n5", ["b0"]),
        ("n0", ["b1"]),
    ]


def test_rows_a_walk_or_a_replay_changed_are_read_again_on_the_same_snapshot() -> None:
    # One snapshot object across calls, as the loop's kept snapshot: moving a's pod to n1 (walked,
    # then replayed) changes the memo's plain row of n1, and so does a pod bound to n1 between calls;
    # the next call must read n1 again (b goes to n2 once c fills n1; a goes to n1 or n2).
    nodes = [node(f"n{i}", cpu=1000, pods=8) for i in range(6)]
    bound = [
        pod("a", 600, 0, owners=owner("a"), node_name="n0"),
        pod("b", 500, 0, owners=owner("b"), node_name="n5"),
    ]
    snap, memo = ClusterSnapshot(nodes, bound), RemovalMemo()
    # n4 is empty: removing it moves nothing, so n1's plain row is read and left as it was.
    steps = [["n0"], ["n5"], ["n0"], ["n5"], ["n4"], "bind c", ["n5"], ["n0"], ["n5"]]
    with _near(3, 1):
        for step in steps:
            if step == "bind c":
                c = pod("c", 600, 0, owners=owner("c"), node_name="n1")
                snap.add_pod(c, snap.index_of("n1"))
                bound.append(c)
                continue
            kept = simulate_removals(snap, step, memo=memo)
            assert kept == simulate_removals(ClusterSnapshot(nodes, bound), step)
    assert memo.replayed >= 2


def test_a_slot_holding_another_node_on_the_same_snapshot_is_read_again() -> None:
    # The loop adds its upcoming nodes after the kept ones and takes them away again: the same slot
    # may hold a smaller template node the next time, with as many slots. Removing n0 moves the walk
    # past n1, so big's walk (n2's pod) reaches the upcoming node in the last slot.
    nodes = [node("n0", cpu=1000, pods=8), node("n1", cpu=1000, pods=8), node("n2", cpu=3000, pods=8)]
    bound = [
        pod("small", 100, 0, owners=owner("small"), node_name="n0"),
        pod("big", 2000, 0, owners=owner("big"), node_name="n2"),
    ]
    snap, memo = ClusterSnapshot(nodes, bound), RemovalMemo()
    with _near(3, 1):
        for cpu in (4000, 1000, 4000):  # a row read too big would let the walk bind there
            upcoming = node("up-0", cpu=cpu, pods=8)
            snap.fork()
            snap.add_node(upcoming)
            kept = simulate_removals(snap, ["n0", "n2"], memo=memo)
            snap.revert()
            assert kept == simulate_removals(ClusterSnapshot([*nodes, upcoming], bound), ["n0", "n2"])
            assert kept.results[1].removable == (cpu == 4000)


def test_filter_answers_kept_per_node_class_follow_a_renumbering() -> None:
    # The memo keeps the filters' answer per node class between calls. When the snapshot forgets a
    # class no node uses any more, the others are numbered anew: zone c's class goes from 2 to 1, and
    # an answer read by the old number would leave the pod bound to zone c no place to go.
    nodes = [
        node("a", zone="a"),
        node("b", zone="b"),
        node("c1", zone="c"),
        node("c2", zone="c"),
    ]
    selecting = pod("p", 100, 0, owners=owner("p"), node_name="c1", node_selector={ZONE_LABEL: "c"})
    snap, memo = ClusterSnapshot(nodes, [selecting]), RemovalMemo()
    first = simulate_removals(snap, ["c1"], memo=memo)
    assert first.removable == ("c1",)
    snap.keep_slots([1, 2, 3])  # node a is gone
    snap.drop_unused_classes()
    second = simulate_removals(snap, ["c1"], memo=memo)
    assert second == simulate_removals(ClusterSnapshot(nodes[1:], [selecting]), ["c1"])
    assert second.removable == ("c1",)


def test_kept_filter_answers_are_bounded() -> None:
    snap, memo = ClusterSnapshot([node("a")], []), RemovalMemo()
    checker = memo.checker(snap)
    assert memo.checker(snap) is checker  # kept while the snapshot and its classes are the same
    for k in range(4097):  # pods of many templates, each with its own facts
        checker.facts(pod(f"p{k}", 100 + k, 0, owners=owner(f"t{k}")))
    assert checker.known == 4097
    assert memo.checker(snap) is not checker
