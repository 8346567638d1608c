"""The order the removal simulation tries the candidates in: CA 1.31's
``ScaleDownCandidatesSortingProcessor`` (processors/scaledowncandidates), ``sort.Sort`` with
``EmptySorting`` then ``PreviousCandidates``. ``sort.Sort`` is not stable: ties come out as Go's
pdqsort leaves them, checked against Go's own answers (``data/go_sort_cases.json``).

(This file used to pin a stable sort of the eligible nodes, with "empty" meaning "no pod at all":
upstream sorts all candidates, DaemonSet-only nodes count as empty, and the sort is Go's.)"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

from ca_builders import cnode
from hypothesis import given
from hypothesis import strategies as st

from kubetide.cluster.gosort import go_sort_permutation
from kubetide.cluster.scaledown.candidates import CandidateOrder
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.scheduling.drainability import SAFE_TO_EVICT as SAFE
from kubetide.scheduling.drainability import DrainContext, DrainOptions, drain_node, is_empty

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


def _sort(nodes: list[NodeView], pods: dict[str, list[Pod]], previous: Collection[str] = ()) -> list[str]:
    return [n.name for n in CandidateOrder().sort(nodes, pods, {}, previous, 0.0)]


def test_empty_means_nothing_to_move_and_nothing_blocking() -> None:
    """EmptySorting.isNodeEmpty: GetPodsToMove (no listers, no PDBs) returns no error and no pods; a
    node with only DaemonSet pods is empty, one with a bare pod (NotReplicated) is not."""
    names = ["busy", "ds-only", "bare", "none"]
    pods = {
        "busy": [_pod("a", "busy")],
        "ds-only": [_pod("d", "ds-only", "DaemonSet")],
        "bare": [_pod("b", "bare", None)],
        "none": [],
    }
    assert _sort([cnode(n) for n in names], pods) == ["ds-only", "none", "busy", "bare"]


def test_previous_candidates_first_within_each_part() -> None:
    names = ["busy", "busy-unneeded", "empty", "empty-unneeded"]
    pods = {"busy": [_pod("a", "busy")], "busy-unneeded": [_pod("b", "busy-unneeded")]}
    order = _sort([cnode(n) for n in names], pods, {"busy-unneeded", "empty-unneeded"})
    assert order == ["empty-unneeded", "empty", "busy-unneeded", "busy"]


def test_more_than_twelve_candidates_tie_as_go_sorts_them() -> None:
    """With more than 12 candidates, ties are in sort.Sort's order, not the node list's."""
    nodes = [cnode(f"n{i:02d}") for i in range(20)]
    previous = {"n03", "n11", "n17"}
    order = _sort(nodes, {n.name: [_pod(n.name, n.name)] for n in nodes}, previous)
    keys = [2 + (0 if n.name in previous else 1) for n in nodes]
    assert order == [nodes[i].name for i in go_sort_permutation(keys)]
    assert set(order[:3]) == previous
    assert order != sorted((n.name for n in nodes), key=lambda x: x not in previous)


_ANNOTATIONS = st.sampled_from(
    [
        {},
        {"kubernetes.io/config.mirror": "x"},
        {SAFE: "true"},
        {SAFE: "false"},
        {SAFE: "on-completion"},
        {"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"},
    ]
)


@st.composite
def _pods(draw: st.DrawFn) -> Pod:
    owner = draw(st.sampled_from(["ReplicaSet", "DaemonSet", "Job", "Custom", None]))
    deleted = draw(st.sampled_from([None, -1000.0, -10.0]))
    phase, policy = draw(
        st.sampled_from([("Running", "Always"), ("Succeeded", "Never"), ("Failed", "OnFailure")])
    )
    volumes: tuple[dict[str, object], ...] = draw(st.sampled_from([(), ({"name": "v", "hostPath": {}},)]))
    return Pod(
        "p",
        namespace=draw(st.sampled_from(["default", "kube-system"])),
        owners=(OwnerRef(owner, "o", "u", True),) if owner else (),
        annotations=draw(_ANNOTATIONS),
        deletion_time=deleted,
        phase=phase,
        restart_policy=policy,
        volumes=volumes,
    )


@given(st.lists(_pods(), max_size=4), st.booleans(), st.booleans(), st.booleans())
def test_empty_is_get_pods_to_move_finding_nothing(
    pods: list[Pod], system: bool, local: bool, custom: bool
) -> None:
    """is_empty (from the rules' order) agrees with running the drain rules with no PDBs and no
    controllers, whatever the options (the EmptySorting question)."""
    options = DrainOptions(system, local, custom)
    plan = drain_node(pods, DrainContext(0.0, options))
    expected = plan.blocking is None and not plan.pods_to_move and not plan.on_completion_pods
    assert is_empty(pods, 0.0) == expected


def test_emptiness_is_kept_by_pods_version_and_judged_again_when_it_changes() -> None:
    order = CandidateOrder()
    nodes = [cnode("a"), cnode("b")]
    first = order.sort(
        nodes, {"a": [_pod("p", "a")], "b": [_pod("d", "b", "DaemonSet")]}, {"a": 1, "b": 1}, (), 0.0
    )
    assert [n.name for n in first] == ["b", "a"]
    # Same versions: the kept answers hold (the pods given are not looked at).
    kept = order.sort(nodes, {}, {"a": 1, "b": 1}, (), 0.0)
    assert [n.name for n in kept] == ["b", "a"]
    # New versions: a's pods left, b got a pod to move.
    again = order.sort(
        nodes, {"a": [_pod("d2", "a", "DaemonSet")], "b": [_pod("q", "b")]}, {"a": 2, "b": 2}, (), 0.0
    )
    assert [n.name for n in again] == ["a", "b"]


def test_a_node_with_a_pod_being_deleted_is_judged_every_time() -> None:
    """isNodeEmpty runs the long-terminating rule with the time: such a node's answer is not kept."""
    order = CandidateOrder()
    nodes = [cnode("x"), cnode("y")]
    going = [_pod("t", "x").evolve(deletion_time=0.0, termination_grace_s=30.0)]
    pods = {"x": going, "y": [_pod("d", "y", "DaemonSet")]}
    assert [n.name for n in order.sort(nodes, pods, {"x": 1, "y": 1}, (), 60.0)] == [
        "y",
        "x",
    ]  # 0+30+30 == 60
    assert [n.name for n in order.sort(nodes, pods, {"x": 1, "y": 1}, (), 60.001)] == ["x", "y"]
