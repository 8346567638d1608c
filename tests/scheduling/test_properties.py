"""Property tests: the vectorized core agrees with the plain reference on random clusters, and never
overcommits a node."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetide.model.node import HOSTNAME_LABEL, ZONE_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import PodAffinityTerm, Taint, Toleration
from kubetide.scheduling import removal_simulation
from kubetide.scheduling.estimator import estimate
from kubetide.scheduling.fit import FitChecker
from kubetide.scheduling.removal_simulation import must_move, simulate_removals
from kubetide.scheduling.scheduler import Scheduler
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import GI, MI, node, owner, pod, selector, spread
from .reference import ref_estimate, ref_failure, ref_fits, ref_remove

SETTINGS = settings(
    max_examples=int(__import__("os").environ.get("KT_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TAINT = Taint("dedicated", "batch", "NoSchedule")


@st.composite
def nodes(draw: Any, max_nodes: int = 6, min_nodes: int = 1) -> list[NodeView]:
    out = []
    for i in range(draw(st.integers(min_nodes, max_nodes))):
        out.append(
            node(
                f"n{i}",
                draw(st.sampled_from([500, 1000, 2000])),
                draw(st.sampled_from([1, 2, 4])) * GI,
                draw(st.integers(2, 8)),
                zone=draw(st.sampled_from(["z1", "z2", None])),
                labels={"disk": "ssd"} if draw(st.booleans()) else {},
                taints=(TAINT,) if draw(st.integers(0, 4)) == 0 else (),
                unschedulable=draw(st.integers(0, 6)) == 0,
                extra={"nvidia.com/gpu": 1} if draw(st.integers(0, 3)) == 0 else None,
            )
        )
    return out


@st.composite
def pods(draw: Any, name: str, simple: bool = False) -> Pod:
    app = draw(st.sampled_from(["a", "b"]))
    kw: dict[str, Any] = {}
    if draw(st.integers(0, 4)) == 0:
        kw["node_selector"] = {"disk": "ssd"}
    if draw(st.integers(0, 3)) == 0:
        kw["tolerations"] = (Toleration("dedicated", "Exists"),)
    if draw(st.integers(0, 5)) == 0:
        kw["extra"] = {"nvidia.com/gpu": 1}
    if not simple:
        if draw(st.integers(0, 5)) == 0:
            kw["ports"] = (8080,)
        if draw(st.integers(0, 5)) == 0:
            key = draw(st.sampled_from([HOSTNAME_LABEL, ZONE_LABEL]))
            kw["anti"] = (PodAffinityTerm(selector(app=app), key),)
        if draw(st.integers(0, 6)) == 0:
            kw["affine"] = (PodAffinityTerm(selector(app=app), ZONE_LABEL),)
        if draw(st.integers(0, 5)) == 0:
            kw["spread"] = (
                spread(draw(st.sampled_from([HOSTNAME_LABEL, ZONE_LABEL])), draw(st.integers(1, 2)), app=app),
            )
    return pod(
        name,
        draw(st.sampled_from([0, 100, 250, 500, 900])),
        draw(st.sampled_from([0, 128 * MI, 512 * MI, 1 * GI])),
        labels={"app": app},
        owners=owner(draw(st.sampled_from(["rs1", "rs2", "rs3"]))),
        **kw,
    )


@st.composite
def clusters(draw: Any, simple: bool = False) -> ClusterSnapshot:
    """Nodes with pods bound where the reference says they fit (so no node starts overcommitted)."""
    snap = ClusterSnapshot(draw(nodes()))
    for k in range(draw(st.integers(0, 12))):
        p = draw(pods(f"bound{k}", simple))
        i = draw(st.integers(0, snap.num_slots - 1))
        if ref_fits(snap, p, i):
            snap.add_pod(p, i)
    return snap


@SETTINGS
@given(clusters(), st.data())
def test_filters_agree_with_reference(snap: ClusterSnapshot, data: Any) -> None:
    p = data.draw(pods("incoming"))
    checker = FitChecker(snap)
    facts = checker.facts(p)
    expected = [ref_failure(snap, p, i) for i in range(snap.num_slots)]
    assert checker.diagnose(facts, np.arange(snap.num_slots)) == expected
    assert checker.feasible(facts).tolist() == [e is None for e in expected]


@SETTINGS
@given(clusters(), st.data())
def test_capacity_is_how_many_identical_pods_fit_one_by_one(snap: ClusterSnapshot, data: Any) -> None:
    p = data.draw(pods("incoming", simple=True))
    checker = FitChecker(snap)
    facts = checker.facts(p)
    if not checker.is_simple(facts):
        return
    capacity = checker.capacity(facts).tolist()
    for i in range(snap.num_slots):
        snap.fork()
        n = 0
        while n < 20 and ref_fits(snap, p, i):
            snap.add_pod(p, i)
            n += 1
        snap.revert()
        assert capacity[i] == n


@SETTINGS
@given(clusters(), st.data())
def test_estimate_agrees_with_reference(snap: ClusterSnapshot, data: Any) -> None:
    template = data.draw(nodes(max_nodes=1))[0]
    pending = [data.draw(pods(f"p{k}")) for k in range(data.draw(st.integers(1, 14)))]
    before = (snap.num_slots, snap.requested.tolist())
    result = estimate(snap, template, pending)
    count, scheduled = ref_estimate(snap, template, pending)
    assert result.node_count == count
    assert [p.name for p in result.scheduled] == [p.name for p in scheduled] or (
        sorted(p.name for p in result.scheduled) == sorted(p.name for p in scheduled)
    )
    width = len(before[1][0])  # a new extended resource may add a column, never a value
    assert (snap.num_slots, snap.requested[:, :width].tolist()) == before


@SETTINGS
@given(clusters(), st.data())
def test_removal_simulation_agrees_with_reference(snap: ClusterSnapshot, data: Any) -> None:
    names = [snap.name(i) for i in range(snap.num_slots)]
    candidates = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    check = simulate_removals(snap, candidates)
    assert list(check.removable) == ref_remove(snap, candidates, must_move)


@st.composite
def replica_clusters(draw: Any) -> ClusterSnapshot:
    """Up to 12 nodes with pods of three ReplicaSets bound where they fit: a node holds several
    identical pods, which the removal simulation moves as one group."""
    snap = ClusterSnapshot(draw(nodes(max_nodes=12, min_nodes=4)))
    shapes = [(100, 128 * MI), (250, 512 * MI), (500, 1 * GI)]
    crowded = draw(st.integers(1, 3))  # most pods on the first few nodes: the ones to remove
    for k in range(draw(st.integers(8, 40))):
        rs = draw(st.integers(0, 2))
        cpu, mem = shapes[rs]
        p = pod(f"r{k}", cpu, mem, labels={"app": f"rs{rs}"}, owners=owner(f"rs{rs}"))
        i = draw(st.integers(0, crowded) | st.integers(0, snap.num_slots - 1))
        if ref_fits(snap, p, i):
            snap.add_pod(p, i)
    return snap


@SETTINGS
@given(replica_clusters() | clusters(simple=True) | clusters(), st.data())
def test_removal_fill_near_the_cursor_is_the_full_fill(snap: ClusterSnapshot, data: Any) -> None:
    # The fill that looks only at the nodes after the cursor (down to one node per pod here, so it is
    # tried, and declines, often) must give the very moves of the fill over every node.
    names = [snap.name(i) for i in range(snap.num_slots)]
    candidates = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    saved = removal_simulation._NEAR, removal_simulation._NEAR_PER_POD
    try:
        removal_simulation._NEAR, removal_simulation._NEAR_PER_POD = (
            1,
            data.draw(st.sampled_from([1, 2, 3, 5])),
        )
        near = simulate_removals(snap, candidates)
        removal_simulation._NEAR, removal_simulation._NEAR_PER_POD = (
            10**9,
            1,
        )  # never near: always the full fill
        full = simulate_removals(snap, candidates)
    finally:
        removal_simulation._NEAR, removal_simulation._NEAR_PER_POD = saved
    assert near == full


@SETTINGS
@given(clusters(), st.data())
def test_kept_removals_and_scheduling_never_overcommit(snap: ClusterSnapshot, data: Any) -> None:
    names = [snap.name(i) for i in range(snap.num_slots)]
    candidates = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    simulate_removals(snap, candidates, keep=True)
    pending = [data.draw(pods(f"p{k}")) for k in range(data.draw(st.integers(0, 14)))]
    result = Scheduler(seed=data.draw(st.integers(0, 3))).schedule(snap, pending)
    assert len(result.placements) + len(result.unschedulable) == len(pending)
    for i in snap.active_indices().tolist():
        bound = snap.pods_on(i)
        alloc = snap.node(i).allocatable
        assert len(bound) <= alloc["pods"]
        for r in ("cpu", "memory", "nvidia.com/gpu"):
            assert sum(p.requests[r] for p in bound) <= alloc[r]
        # the columnar totals agree with the pods actually bound
        for r in ("cpu", "memory"):
            assert snap.requested[i, snap.column(r)] == sum(p.requests[r] for p in bound)
    for u in result.unschedulable:
        assert u.message.startswith(f"0/{snap.num_active()} nodes are available")


@SETTINGS
@given(nodes(), st.data())
def test_constructor_binds_pods_as_one_by_one_binding_does(node_list: list[NodeView], data: Any) -> None:
    """The constructor's vectorized binding (every running pod, each loop) equals ``add_pod`` per pod:
    same requested columns (extended resources included), pod lists in order and anti-affinity counts."""
    bound = []
    for k in range(data.draw(st.integers(0, 20))):
        slot = data.draw(st.integers(0, len(node_list) - 1))
        bound.append(replace(data.draw(pods(f"p{k}")), node_name=node_list[slot].name))
    built = ClusterSnapshot(node_list, bound)
    reference = ClusterSnapshot(node_list)
    for p in bound:
        reference.add_pod(p, reference.index_of(p.node_name))
    assert built.resources == reference.resources
    assert built.requested.tolist() == reference.requested.tolist()
    assert [list(built.pods_on(i)) for i in range(built.num_slots)] == [
        list(reference.pods_on(i)) for i in range(reference.num_slots)
    ]
    assert built.constrained_pods == reference.constrained_pods
