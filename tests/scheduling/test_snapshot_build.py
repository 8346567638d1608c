"""A snapshot and a pod index built at once, in array steps, are the ones built the plain way: every
node added and every pod bound one at a time (``add_node``, ``add_pod``), and, for the index, every
pod told to it as it is bound."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.model.node import HOSTNAME_LABEL, ZONE_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import PodAffinityTerm
from kubetide.scheduling.pod_index import PodIndex
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import node, pod, selector

_ANTI = (PodAffinityTerm(selector(app="a"), HOSTNAME_LABEL),)


@st.composite
def _world(draw: st.DrawFn) -> tuple[list[NodeView], list[list[Pod]]]:
    count = draw(st.integers(0, 6))
    shapes = [  # some allocatable objects shared by several nodes, some equal values, extended resources
        node("x", cpu=4000),
        node("x", cpu=8000, extra={"nvidia.com/gpu": 2}),
        node("x", cpu=4000, extra={"example.com/fpga": 1}),
    ]
    nodes = []
    for i in range(count):
        shape = shapes[draw(st.integers(0, 2))]
        labels = {ZONE_LABEL: f"z{draw(st.integers(0, 2))}"}
        if draw(st.booleans()):
            labels[HOSTNAME_LABEL] = f"h{i}"  # else the snapshot gives it one
        nodes.append(
            NodeView(f"n{i}", labels=labels, allocatable=shape.allocatable, capacity=shape.allocatable)
        )
    templates = [
        pod("t0", cpu=100, labels={"app": "a"}, anti=_ANTI),
        pod("t1", cpu=250, labels={"app": "b"}, extra={"nvidia.com/gpu": 1}),
        pod("t2", cpu=2**62, labels={"app": "a"}),  # sums past int64 wrap as one bind at a time does
        pod("t3", cpu=50, labels={"app": "c"}, extra={"example.com/other": 3}),
        pod("t4", cpu=100, labels={"app": "a"}),  # t0's request, another object
    ]
    lists = []
    for n in nodes:
        picks = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(-30, 5)), max_size=6))
        lists.append(
            [
                templates[k].evolve(name=f"{n.name}-p{j}", node_name=n.name, priority=prio)
                for j, (k, prio) in enumerate(picks)
            ]
        )
    return nodes, lists


def _plain(nodes: list[NodeView], lists: list[list[Pod]], low: int | None = None) -> ClusterSnapshot:
    snap = ClusterSnapshot()
    for n in nodes:
        snap.add_node(n)
    for i, pods in enumerate(lists):
        for p in pods:
            if low is None or p.priority >= low:
                snap.add_pod(p, i)
    return snap


def _state(s: ClusterSnapshot) -> tuple[Any, ...]:
    return (
        s.num_slots,
        list(s.resources),
        [s.name(i) for i in range(s.num_slots)],
        [s.node(i) for i in range(s.num_slots)],
        [[id(p) for p in s.pods_on(i)] for i in range(s.num_slots)],
        s.requested.tolist(),
        s.allocatable.tolist(),
        s.active.tolist(),
        s._anti[: s.num_slots].tolist(),
        s.constrained_pods,
        list(s.classes),
        s.node_class_ids.tolist(),
        s.node_epoch,
    )


@settings(max_examples=200, deadline=None)
@given(_world(), st.sampled_from([None, -10, 0]))
def test_a_snapshot_built_at_once_is_the_one_built_node_by_node_and_pod_by_pod(
    world: tuple[list[NodeView], list[list[Pod]]], low: int | None
) -> None:
    nodes, lists = world
    expected = _state(_plain(nodes, lists, low))
    if low is None:
        assert _state(ClusterSnapshot(nodes, [p for pods in lists for p in pods])) == expected
    assert _state(ClusterSnapshot.from_pods_by_node(nodes, lists, low)) == expected


def test_a_node_given_twice_is_an_error_naming_it() -> None:
    try:
        ClusterSnapshot([node("a"), node("b"), node("a")])
    except ValueError as exc:
        assert str(exc) == "node a is already in the snapshot"
    else:
        raise AssertionError("no error")


def _index_state(index: PodIndex) -> list[Any]:
    return [
        (c.cls, list(c.slots.items()), index.domain_counts([c], ZONE_LABEL).tolist()) for c in index.classes
    ]


@settings(max_examples=200, deadline=None)
@given(_world())
def test_a_pod_index_built_at_once_counts_what_binding_pod_by_pod_counts(
    world: tuple[list[NodeView], list[list[Pod]]],
) -> None:
    nodes, lists = world
    told = _plain(nodes, [[] for _ in nodes])
    told.pod_index()  # built while empty: every bind below is told to it
    for i, pods in enumerate(lists):
        for p in pods:
            told.add_pod(p, i)
    at_once = _plain(nodes, lists).pod_index()
    assert _index_state(at_once) == _index_state(told.pod_index())
    assert [c.cls for c in at_once.anti_classes] == [c.cls for c in told.pod_index().anti_classes]
