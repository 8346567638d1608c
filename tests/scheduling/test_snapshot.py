"""Forks are cheap and exact: revert restores every column, list and count; commit keeps changes."""

from __future__ import annotations

import numpy as np
import pytest

from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import node, pod


def _state(s: ClusterSnapshot) -> tuple[object, ...]:
    return (
        s.num_slots,
        s.requested.copy().tolist(),
        s.active.copy().tolist(),
        [list(s.pods_on(i)) for i in range(s.num_slots)],
        s.constrained_pods,
    )


def test_revert_restores_everything_nested() -> None:
    a = pod("a", node_name="n0")
    s = ClusterSnapshot([node("n0"), node("n1")], [a])
    before = _state(s)
    s.fork()
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


def test_revert_after_a_resource_column_was_added_inside_the_fork() -> None:
    s = ClusterSnapshot([node("n0")])
    s.fork()
    s.add_pod(pod("a"), 0)
    s.take_pods(0)
    s.add_pods_bulk(np.array([0]), np.array([1]), [pod("b")], s.vector(pod("b").requests))
    s.add_pod(pod("g", extra={"nvidia.com/gpu": 1}), 0)  # widens the arrays
    s.revert()
    assert s.requested.tolist() == [[0] * len(s.resources)]
    assert list(s.pods_on(0)) == []
