"""A snapshot kept from loop to loop is the snapshot built afresh: whatever changed between loops (a
node's view, pods added, moved, replaced or reordered, other nodes) and whatever the loop did to the
snapshot it was given (nodes added and removed, pods bound and taken, a new resource column)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.model.node import HOSTNAME_LABEL
from kubetide.model.scheduling_terms import PodAffinityTerm, Taint
from kubetide.scheduling.kept import SnapshotKeeper
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import node, pod, selector

_ANTI = (PodAffinityTerm(selector(app="x"), HOSTNAME_LABEL),)
# Pods bound to each node (a pod that moves is another object, as the informer shows it).
_PODS = {
    name: [
        pod(
            f"{name}-p{i}",
            cpu=100 * (1 + i % 3),
            node_name=name,
            anti=_ANTI if i % 7 == 0 else (),
            priority=5 * (i % 3) - 5,
        )
        for i in range(8)
    ]
    for name in ("a", "b", "c", "d")
}
_GPU_POD = pod("gpu", extra={"nvidia.com/gpu": 1})
_VIEWS = {
    name: [
        node(name),
        node(name, taints=(Taint("DeletionCandidateOfClusterAutoscaler", "1", "PreferNoSchedule"),)),
        node(name, labels={"x": "y"}),
        node(name, cpu=8000),  # other allocatable: a different machine
    ]
    for name in ("a", "b", "c", "d")
}


def _state(s: ClusterSnapshot) -> tuple[Any, ...]:
    width = min(len(s.resources), 4)
    extra = s.requested[:, width:]
    return (
        s.num_slots,
        [s.name(i) for i in range(s.num_slots)],
        [s.node(i) for i in range(s.num_slots)],
        [[id(p) for p in s.pods_on(i)] for i in range(s.num_slots)],
        s.requested[:, :width].tolist(),
        {r: s.requested[:, s.column(r)].tolist() for r in s.resources},
        bool((extra == 0).all()) or {r: s.requested[:, s.column(r)].tolist() for r in s.resources[4:]},
        s.active.tolist(),
        s.allocatable[:, :width].tolist(),
        s._anti[: s.num_slots].tolist(),
        s.constrained_pods,
        [s.classes[c] for c in s.node_class_ids.tolist()],
    )


_NAMES = st.lists(st.sampled_from(sorted(_VIEWS)), min_size=1, max_size=4, unique=True)


@st.composite
def _loop(draw: st.DrawFn, usual: list[str]) -> tuple[list[Any], list[list[Any]], list[tuple[str, int]]]:
    # Usually the same nodes as the other loops (their views may change); sometimes some of them gone
    # (nodes deleted: the others keep their slots' pods); sometimes others.
    fewer = [n for n in usual if draw(st.booleans())] or usual[:1]
    names = draw(st.sampled_from([usual, usual, usual, fewer, draw(_NAMES)]))
    nodes = [_VIEWS[n][draw(st.integers(0, 3))] for n in names]
    pods = [draw(st.lists(st.sampled_from(_PODS[n]), unique=True, max_size=8)) for n in names]
    work = draw(
        st.lists(st.tuples(st.sampled_from(["bind", "take", "remove", "template", "gpu"]), st.integers(0, 9)))
    )
    # A node's pods may come as the very sequence object of an earlier loop (0: a new one; k: the k-th
    # latest), as a source that keeps them gives; or (-1) the latest one's pods in a new sequence, as
    # a world rebuilt around unchanged pods gives.
    same = [draw(st.integers(-1, 2)) for _ in names]
    return nodes, pods, work, same


def _fresh_state(nodes: list[Any], pods: list[list[Any]], low: int | None = None) -> tuple[Any, ...]:
    return _state(ClusterSnapshot(nodes, [p for ps in pods for p in ps if low is None or p.priority >= low]))


def _do_work(s: ClusterSnapshot, work: list[tuple[str, int]]) -> None:
    for k, (op, at) in enumerate(work):
        live = s.active_indices().tolist()
        if not live:
            return
        i = live[at % len(live)]
        if op == "bind":
            s.add_pod(pod(f"w{k}"), i)
        elif op == "take":
            s.take_pods(i)
        elif op == "remove" and not s.pods_on(i):
            s.remove_node(i)
        elif op == "template":
            s.add_template_nodes(node("tmpl", labels={"t": str(at)}), [f"tmpl-{k}"])
        elif op == "gpu":
            s.add_pod(_GPU_POD, i)


def _common(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    # The kept snapshot may have resource columns an earlier loop added (all zero): compare the
    # columns the fresh one has, and require the others to be zero.
    fresh_columns = set(b[5])
    kept_columns = {r: v for r, v in a[5].items() if r in fresh_columns}
    assert all(all(x == 0 for x in v) for r, v in a[5].items() if r not in fresh_columns)
    return (*a[:5], kept_columns, *a[7:])


@settings(max_examples=300, deadline=None)
@given(
    _NAMES.flatmap(lambda usual: st.lists(_loop(usual), min_size=1, max_size=6)),
    st.lists(st.sampled_from([None, None, 0, 5]), min_size=6, max_size=6),
)
def test_each_loop_gets_the_snapshot_a_fresh_build_gives(loops: list[Any], lows: list[int | None]) -> None:
    keeper = SnapshotKeeper()
    seen: dict[str, list[Any]] = {}
    versions: dict[int, list[int]] = {}  # a version always names the same pods
    for (nodes, pods, work, same), low in zip(loops, lows, strict=False):
        given = [
            list(seen[n.name][-1])
            if k < 0 and seen.get(n.name)
            else seen[n.name][-k]
            if k > 0 and len(seen.get(n.name, ())) >= k
            else tuple(ps)
            for n, ps, k in zip(nodes, pods, same, strict=True)
        ]
        for n, ps in zip(nodes, given, strict=True):
            seen.setdefault(n.name, []).append(ps)
        snap = keeper.snapshot(nodes, given, low)
        fresh = _fresh_state(nodes, [list(ps) for ps in given], low)
        assert _common(_state(snap), fresh) == (*fresh[:5], fresh[5], *fresh[7:])
        for i in range(snap.num_slots):
            assert snap.index_of(snap.name(i)) == i
            ids = [id(p) for p in snap.pods_on(i)]
            assert versions.setdefault(snap.pods_version(i), ids) == ids
        _do_work(snap, work)


def test_a_loop_that_left_a_fork_open_gets_a_fresh_snapshot() -> None:
    keeper = SnapshotKeeper()
    nodes, pods = [_VIEWS["a"][0]], [[_PODS["a"][1]]]
    first = keeper.snapshot(nodes, pods)
    first.fork()  # a loop that failed halfway through a what-if
    first.add_pod(_PODS["a"][2], 0)
    again = keeper.snapshot(nodes, pods)
    assert again is not first and keeper.rebuilt == 2
    assert [p.name for p in again.pods_on(0)] == ["a-p1"]
    assert np.array_equal(again.requested[0, :2], [200, _PODS["a"][1].requests["memory"]])


def test_a_sequence_given_again_after_another_gets_its_own_pods() -> None:
    keeper = SnapshotKeeper()
    nodes = [_VIEWS["a"][0]]
    first, second = tuple(_PODS["a"][:2]), tuple(_PODS["a"][2:4])
    for pods in (first, second, first):
        snap = keeper.snapshot(nodes, [pods])
        assert list(snap.pods_on(0)) == list(pods)
    assert keeper.rebuilt == 1


def test_classes_no_node_uses_any_more_are_forgotten_and_ids_are_a_fresh_builds() -> None:
    # CA's soft taint carries a time: over a day a kept snapshot meets a new node class every time.
    keeper = SnapshotKeeper()
    names = sorted(_VIEWS)
    pods = [[_PODS[n][0]] for n in names]
    for loop in range(200):
        nodes = [
            node(n, taints=(Taint("DeletionCandidateOfClusterAutoscaler", str(loop), "PreferNoSchedule"),))
            if k == loop % len(names)
            else _VIEWS[n][0]
            for k, n in enumerate(names)
        ]
        snap = keeper.snapshot(nodes, pods)
        fresh = ClusterSnapshot(nodes, [p for ps in pods for p in ps])
        assert [snap.classes[c] for c in snap.node_class_ids] == [
            fresh.classes[c] for c in fresh.node_class_ids
        ]
        assert len(snap.classes) <= 40  # two in use, and at most twice as many plus 32 not
    assert keeper.rebuilt == 1
    # The first node's class is the newest: a fresh build numbers it first.
    last = Taint("DeletionCandidateOfClusterAutoscaler", "last", "PreferNoSchedule")
    nodes = [node(names[0], taints=(last,)), *(_VIEWS[n][0] for n in names[1:])]
    snap = keeper.snapshot(nodes, pods)
    fresh = ClusterSnapshot(nodes, [p for ps in pods for p in ps])
    snap.revert()
    snap.drop_unused_classes()
    assert snap.classes == fresh.classes
    assert snap.node_class_ids.tolist() == fresh.node_class_ids.tolist()
