"""The order the removal simulation tries the candidates in: CA 1.31's
``ScaleDownCandidatesSortingProcessor`` (processors/scaledowncandidates), ``sort.Sort`` with
``EmptySorting`` then ``PreviousCandidates``. ``sort.Sort`` is not stable: ties come out as Go's
pdqsort leaves them, checked against Go's own answers (``data/go_sort_cases.json``).

(This file used to pin a stable sort of the eligible nodes, with "empty" meaning "no pod at all":
upstream sorts all candidates, DaemonSet-only nodes count as empty, and the sort is Go's.)"""

from __future__ import annotations

import json
from pathlib import Path

from ca_builders import cnode
from hypothesis import given
from hypothesis import strategies as st

from kubetide.cluster.gosort import go_sort_permutation
from kubetide.cluster.scaledown.candidates import CandidateOrder
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.scheduling.drainability import DrainContext

_GO = json.loads((Path(__file__).parent / "data" / "go_sort_cases.json").read_text())


def test_go_sort_permutation_is_gos_answer() -> None:
    """Go 1.19.8's sort.Sort (sort/zsortinterface.go pdqsort; CA 1.31 is built with Go 1.22, whose
    sort package is the same) gave these orders, ties included."""
    for case in _GO["cases"]:
        assert go_sort_permutation(case["keys"]) == case["order"], case["keys"]


def test_go_sort_breaks_ties_unlike_a_stable_sort() -> None:
    # Not a vacuous fixture: some of Go's answers put equal keys out of their input order.
    unstable = [
        c for c in _GO["cases"] if c["order"] != sorted(range(len(c["keys"])), key=c["keys"].__getitem__)
    ]
    assert unstable and all(len(c["keys"]) > 12 for c in unstable)


@given(st.lists(st.integers(0, 3), max_size=200))
def test_go_sort_sorts_and_permutes(keys: list[int]) -> None:
    order = go_sort_permutation(keys)
    assert sorted(order) == list(range(len(keys)))
    assert [keys[i] for i in order] == sorted(keys)
    if len(keys) <= 12:  # insertionSort: stable
        assert order == sorted(range(len(keys)), key=keys.__getitem__)


def _pod(name: str, node: str, owner: str | None = "ReplicaSet") -> Pod:
    owners = (OwnerRef(owner, "o", f"uid-{owner}", True),) if owner else ()
    return Pod(
        name,
        owners=owners,
        containers=(Container("c", Resources({"cpu": 10})),),
        node_name=node,
    )


def test_empty_means_nothing_to_move_and_nothing_blocking() -> None:
    """EmptySorting.isNodeEmpty: GetPodsToMove (no listers, no PDBs) returns no error and no pods; a
    node with only DaemonSet pods is empty, one with a bare pod (NotReplicated) is not."""
    names = ["busy", "ds-only", "bare", "none"]
    nodes = [cnode(n) for n in names]
    pods = {
        "busy": [_pod("a", "busy")],
        "ds-only": [_pod("d", "ds-only", "DaemonSet")],
        "bare": [_pod("b", "bare", None)],
        "none": [],
    }
    order = CandidateOrder().sort(nodes, pods, {}, frozenset(), DrainContext(0.0))
    assert [n.name for n in order] == ["ds-only", "none", "busy", "bare"]


def test_previous_candidates_first_within_each_part() -> None:
    names = ["busy", "busy-unneeded", "empty", "empty-unneeded"]
    nodes = [cnode(n) for n in names]
    pods = {"busy": [_pod("a", "busy")], "busy-unneeded": [_pod("b", "busy-unneeded")]}
    order = CandidateOrder().sort(nodes, pods, {}, {"busy-unneeded", "empty-unneeded"}, DrainContext(0.0))
    assert [n.name for n in order] == ["empty-unneeded", "empty", "busy-unneeded", "busy"]


def test_more_than_twelve_candidates_tie_as_go_sorts_them() -> None:
    """With more than 12 candidates, ties are in sort.Sort's order, not the node list's."""
    nodes = [cnode(f"n{i:02d}") for i in range(20)]
    previous = {"n03", "n11", "n17"}
    order = CandidateOrder().sort(
        nodes, {n.name: [_pod(n.name, n.name)] for n in nodes}, {}, previous, DrainContext(0.0)
    )
    keys = [2 + (0 if n.name in previous else 1) for n in nodes]
    assert [n.name for n in order] == [nodes[i].name for i in go_sort_permutation(keys)]
    assert {n.name for n in order[:3]} == previous
    assert [n.name for n in order] != sorted((n.name for n in nodes), key=lambda x: x not in previous)


def test_emptiness_is_kept_by_pods_version_and_rejudged_when_it_changes() -> None:
    order = CandidateOrder()
    nodes = [cnode("a"), cnode("b")]
    ctx = DrainContext(0.0)
    first = order.sort(
        nodes, {"a": [_pod("p", "a")], "b": [_pod("d", "b", "DaemonSet")]}, {"a": 1, "b": 1}, (), ctx
    )
    assert [n.name for n in first] == ["b", "a"]
    # a's pods left (new version): a is empty now; b got a pod to move (new version).
    again = order.sort(
        nodes, {"a": [_pod("d2", "a", "DaemonSet")], "b": [_pod("q", "b")]}, {"a": 2, "b": 2}, (), ctx
    )
    assert [n.name for n in again] == ["a", "b"]
