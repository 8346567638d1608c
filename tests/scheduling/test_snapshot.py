"""Forks are cheap and exact: revert restores every column, list and count; commit keeps changes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.model.node import HOSTNAME_LABEL
from kubetide.model.scheduling_terms import PodAffinityTerm, Taint
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import node, pod, selector


def _state(s: ClusterSnapshot) -> tuple[object, ...]:
    return (
        s.num_slots,
        s.requested.copy().tolist(),
        s.active.copy().tolist(),
        [list(s.pods_on(i)) for i in range(s.num_slots)],
        s.constrained_pods,
        [s.node(i) for i in range(s.num_slots)],
        [s.classes[c] for c in s.node_class_ids.tolist()],
        [s.name(i) for i in range(s.num_slots)],
        s._anti[: s.num_slots].tolist(),  # what a later truncation takes off constrained_pods
    )


@pytest.mark.parametrize("copy", [False, True], ids=["undo-log", "copy"])
def test_revert_restores_everything_nested(copy: bool) -> None:
    a = pod("a", node_name="n0")
    s = ClusterSnapshot([node("n0"), node("n1")], [a])
    before = _state(s)
    s.fork(copy=copy)
    s.add_pod(pod("b"), 1)
    s.fork()
    taken = s.take_pods(0)
    assert taken == [a]
    s.remove_node(0)
    first = s.add_template_nodes(node("tmpl"), ["tmpl-e-0", "tmpl-e-1"])
    s.add_pods_bulk(
        np.array([first, first + 1]), np.array([2, 1]), [pod(f"x{i}") for i in range(3)], s.vector(a.requests)
    )
    s.revert()
    assert len(s.pods_on(1)) == 1 and s.num_slots == 2
    s.revert()
    assert _state(s) == before
    assert not s.has_node("tmpl-e-0")


def test_commit_keeps_changes_and_outer_revert_undoes_them() -> None:
    s = ClusterSnapshot([node("n0")])
    s.fork()
    s.fork()
    s.add_pod(pod("a"), 0)
    s.commit()
    assert len(s.pods_on(0)) == 1
    s.revert()
    assert len(s.pods_on(0)) == 0


def test_template_copies_get_their_own_name_and_hostname() -> None:
    s = ClusterSnapshot()
    i = s.add_template_nodes(node("tmpl", zone="z1"), ["tmpl-e-0"])
    view = s.node(i)
    assert view.name == "tmpl-e-0"
    assert view.labels["kubernetes.io/hostname"] == "tmpl-e-0"
    assert view.labels["topology.kubernetes.io/zone"] == "z1"


def test_unknown_extended_resource_gets_a_zero_column() -> None:
    s = ClusterSnapshot([node("n0")])
    vec = s.vector(pod("g", extra={"nvidia.com/gpu": 1}).requests)
    assert vec[s.column("nvidia.com/gpu")] == 1
    assert s.allocatable[0, s.column("nvidia.com/gpu")] == 0


def test_duplicate_node_is_rejected() -> None:
    s = ClusterSnapshot([node("n0")])
    with pytest.raises(ValueError):
        s.add_node(node("n0"))


@pytest.mark.parametrize("copy", [False, True], ids=["undo-log", "copy"])
def test_revert_after_a_resource_column_was_added_inside_the_fork(copy: bool) -> None:
    s = ClusterSnapshot([node("n0")])
    s.fork(copy=copy)
    s.add_pod(pod("a"), 0)
    s.take_pods(0)
    s.add_pods_bulk(np.array([0]), np.array([1]), [pod("b")], s.vector(pod("b").requests))
    s.add_pod(pod("g", extra={"nvidia.com/gpu": 1}), 0)  # widens the arrays
    s.revert()
    assert s.requested.tolist() == [[0] * len(s.resources)]
    assert list(s.pods_on(0)) == []


_ANTI = (PodAffinityTerm(selector(app="x"), HOSTNAME_LABEL),)
_OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "add",
                "take",
                "remove-pod",
                "remove-node",
                "bulk",
                "each",
                "rows",
                "template",
                "taint",
                "inner",
                "inner-copy",
            ]
        ),
        st.integers(0, 7),
        st.integers(1, 3),
    ),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_a_copying_fork_reverts_to_exactly_what_the_undo_log_would(ops: list[tuple[str, int, int]]) -> None:
    """Whatever happens inside, reverting a ``fork(copy=True)`` leaves the same snapshot as reverting
    a plain fork (both: as it was before), nested forks committed or reverted included."""
    outcomes = []
    seen: dict[int, list[int]] = {}  # pods version -> the pods (ids) it stood for, both snapshots
    for copy in (False, True):
        s = ClusterSnapshot(
            [node(f"n{i}") for i in range(4)],
            [pod(f"p{i}", node_name=f"n{i % 4}", anti=_ANTI if i == 0 else ()) for i in range(6)],
        )
        before = _state(s)
        _same_version_same_pods(s, seen)
        s.fork(copy=copy)
        _apply(s, ops, seen)
        s.revert()
        _same_version_same_pods(s, seen)
        assert _state(s) == before
        outcomes.append(_state(s))
    assert outcomes[0] == outcomes[1]


def _same_version_same_pods(s: ClusterSnapshot, seen: dict[int, list[int]]) -> None:
    for i in range(s.num_slots):
        ids = [id(p) for p in s.pods_on(i)]
        assert seen.setdefault(s.pods_version(i), ids) == ids


def _apply(s: ClusterSnapshot, ops: list[tuple[str, int, int]], seen: dict[int, list[int]]) -> None:
    for made, (op, at, count) in enumerate(ops):
        _same_version_same_pods(s, seen)
        live = [i for i in range(s.num_slots) if s.active[i]]
        if not live:
            return
        i = live[at % len(live)]
        if op == "add":
            anti = _ANTI if count == 3 else ()
            pods = [pod(f"a{made}-{k}", anti=anti) for k in range(count)]
            s.add_pods(pods, i, s.vector(pods[0].requests))
        elif op == "take":
            s.take_pods(i)
        elif op == "remove-pod" and s.pods_on(i):
            s.remove_pod(s.pods_on(i)[0], i)
        elif op == "remove-node" and not s.pods_on(i):
            s.remove_node(i)
        elif op == "bulk":
            slots = np.array(sorted(set(live[:count])), np.intp)
            pods = [pod(f"b{made}-{k}") for k in range(len(slots))]
            s.add_pods_bulk(slots, np.ones(len(slots), np.int64), pods, s.vector(pods[0].requests))
        elif op == "each":
            chosen = sorted(set(live[:count]))
            pods = [pod(f"e{made}-{k}") for k in range(len(chosen))]
            s.add_pods_each(chosen, pods, s.vector(pods[0].requests))
        elif op == "template":
            s.add_template_nodes(node("tmpl"), [f"tmpl-{made}-{k}" for k in range(count)])
        elif op == "taint":
            s.replace_node(i, node(s.name(i), taints=(Taint("t", str(made), "NoSchedule"),)))
        elif op == "rows":
            chosen = sorted(set(live[:count]))
            pods = [pod(f"r{made}-{k}", cpu=100 * (k + 1)) for k in range(len(chosen))]
            rows = np.stack([s.vector(p.requests) for p in pods])
            s.add_pods_rows(np.array(chosen, np.intp), pods, rows)
        elif op in ("inner", "inner-copy"):
            # What follows changes the snapshot again: after a copy fork, lists it shared must not be
            # changed in place.
            s.fork(copy=op == "inner-copy")
            s.add_pod(pod(f"i{made}"), i)
            if count == 1:
                s.commit()
            else:
                s.revert()


def test_slots_of_lists_present_nodes_in_the_order_given() -> None:
    snap = ClusterSnapshot([node("a"), node("b"), node("c")], [])
    assert snap.slots_of(["c", "a", "b"]).tolist() == [2, 0, 1]
    assert snap.slots_of(["c", "nobody", "a"]).tolist() == [2, 0]  # not a node: left out
    snap.fork()
    snap.remove_node(snap.index_of("a"))
    assert snap.slots_of(["a", "b"]).tolist() == [1]  # removed: left out
    assert snap.slots_of([]).tolist() == []


def _state(snap: ClusterSnapshot) -> tuple[object, ...]:
    return (
        list(snap.resources),
        snap.requested.tolist(),
        [[p.name for p in snap.pods_on(i)] for i in range(snap.num_slots)],
        snap.constrained_pods,
    )


@settings(max_examples=60, deadline=None)
@given(
    shapes=st.lists(
        st.tuples(st.integers(0, 4000), st.integers(0, 1 << 34), st.integers(0, 3), st.booleans()),
        max_size=12,
    ),
    bound_first=st.integers(0, 3),
    copy=st.booleans(),
)
def test_binding_pods_in_order_in_one_step_is_binding_them_one_by_one(
    shapes: list[tuple[int, int, int, bool]], bound_first: int, copy: bool
) -> None:
    # Pods with their own requests, some with an extended resource (a column the snapshot adds) and
    # some with anti-affinity; bound after a few already there, inside a fork that is then undone.
    pods = [
        pod(
            f"p{k}",
            cpu,
            mem,
            extra={"example.com/gpu": gpu} if gpu else None,
            anti=_ANTI if anti else (),
        )
        for k, (cpu, mem, gpu, anti) in enumerate(shapes)
    ]
    one, bulk = (ClusterSnapshot([node("a"), node("b")], []) for _ in range(2))
    for snap in (one, bulk):
        for k in range(bound_first):
            snap.add_pod(pod(f"first{k}", 100), 1)
    before = _state(one)
    for snap in (one, bulk):
        snap.fork(copy=copy)
    for p in pods:
        one.add_pod(p, 1)
    bulk.add_pods_in_order(pods, 1)
    assert _state(bulk) == _state(one)
    assert bulk.pods_version(1) != bulk.pods_version(0) or not pods
    for snap in (one, bulk):
        snap.revert()
    assert _state(bulk) == _state(one)
    assert _state(one)[2:] == before[2:]  # the pods as before (a column, once added, stays)


def test_pods_whose_requests_sum_past_int64_bind_as_one_by_one() -> None:
    huge = [pod(f"p{k}", 100, 1 << 62) for k in range(3)]  # 3 x 2^62 bytes: past int64 together
    one, bulk = (ClusterSnapshot([node("a")], []) for _ in range(2))
    for p in huge:
        one.add_pod(p, 0)
    bulk.add_pods_in_order(huge, 0)
    assert _state(bulk) == _state(one)
