"""``HintingSimulator.try_schedule_alike``: groups of identical pods (a CapacityBuffer's fake pods) placed in
bulk. Its answer must be the pod-by-pod simulation's where that one is defined the same way (first fit
with no hints), never overcommit a node, keep a group where it was while there is room, and give a
node whose pods came out the very same as last call its version back (so what is kept by version stays
kept); ``ClusterSnapshot.add_pod_blocks`` is undone by a revert."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.model.pod import Pod
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import node, owner, pod


def group(name: str, count: int, cpu: int) -> tuple[Pod, ...]:
    sample = pod(f"{name}-0", cpu, owners=owner(name, "CapacityBuffer"))
    return tuple(sample.evolve(name=f"{name}-{i}", uid=f"{name}-{i}") for i in range(count))


def where(snap: ClusterSnapshot, pods: tuple[Pod, ...]) -> Counter[str]:
    ids = {id(p) for p in pods}
    return Counter(snap.name(i) for i, p in snap.all_pods() if id(p) in ids)


def fresh(frees: list[int]) -> ClusterSnapshot:
    nodes = [node(f"n{i}", cpu=cpu) for i, cpu in enumerate(frees)]
    return ClusterSnapshot(nodes, [])


@settings(max_examples=60, deadline=None)
@given(
    frees=st.lists(st.integers(0, 4000), min_size=1, max_size=8),
    groups=st.lists(st.tuples(st.integers(1, 12), st.sampled_from([100, 250, 700, 1500])), max_size=4),
)
def test_without_hints_it_is_the_pod_by_pod_first_fit(
    frees: list[int], groups: list[tuple[int, int]]
) -> None:
    made = [group(f"g{k}", count, cpu) for k, (count, cpu) in enumerate(groups)]
    bulk, one_by_one = fresh(frees), fresh(frees)
    placed = HintingSimulator().try_schedule_alike(bulk, made)
    reference = HintingSimulator()
    for pods in made:
        reference.try_schedule(one_by_one, pods)
    for pods, bound in zip(made, placed, strict=True):
        assert where(bulk, pods) == where(one_by_one, pods)
        assert list(bound) == list(pods[: len(bound)])  # what is bound is a prefix of the group
    assert np.all(bulk.requested[: bulk.num_slots] <= bulk.allocatable[: bulk.num_slots])


def test_a_group_stays_where_it_was_and_its_nodes_keep_their_version() -> None:
    snap = fresh([2000, 2000, 2000])
    spare = group("spare", 3, 900)
    sim = HintingSimulator()
    snap.fork()
    sim.try_schedule_alike(snap, [spare])
    first = where(snap, spare)
    versions = list(snap.pods_versions())
    snap.revert()
    snap.fork()
    (bound,) = sim.try_schedule_alike(snap, [spare])
    assert len(bound) == 3 and where(snap, spare) == first
    assert list(snap.pods_versions()) == versions  # the very same pods: the same versions
    snap.revert()


def test_when_a_real_pod_took_the_room_the_group_moves_on() -> None:
    snap = fresh([2000, 2000, 2000])
    spare = group("spare", 2, 900)
    sim = HintingSimulator()
    snap.fork()
    sim.try_schedule_alike(snap, [spare])
    assert where(snap, spare) == {"n0": 2}
    snap.revert()
    snap.add_pod(pod("real", 1500, node_name="n0"), snap.index_of("n0"))
    snap.fork()
    (bound,) = sim.try_schedule_alike(snap, [spare])
    assert len(bound) == 2 and where(snap, spare) == {"n1": 2}
    assert np.all(snap.requested[: snap.num_slots] <= snap.allocatable[: snap.num_slots])
    snap.revert()


def test_a_group_that_fits_nowhere_binds_nothing() -> None:
    snap = fresh([500])
    (bound,) = HintingSimulator().try_schedule_alike(snap, [group("big", 2, 900)])
    assert list(bound) == [] and not list(snap.all_pods())


def test_add_pod_blocks_is_undone_by_a_revert() -> None:
    snap = fresh([4000, 4000])
    before = snap.requested[:2].copy()
    snap.fork()
    blocks = [list(group("a", 2, 100)), list(group("b", 1, 300))]
    totals = np.stack([snap.vector(blocks[0][0].requests) * 2, snap.vector(blocks[1][0].requests)])
    snap.add_pod_blocks(np.array([0, 1], np.intp), blocks, totals)
    assert [len(snap.pods_on(i)) for i in (0, 1)] == [2, 1]
    snap.revert()
    assert np.array_equal(snap.requested[:2], before) and not list(snap.all_pods())
