"""Utilization kept between loops is the utilization computed afresh, whatever changed in between:
the node's view, its pods (equal-looking pods that differ in what the settings read included), the
time for pods being deleted, and the settings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.model.pod import Pod
from kubetide.scheduling.utilization import MIRROR_ANNOTATION, UtilizationMemo, node_utilization

from .builders import node, owner, pod

_NODES = [node("n0"), node("n0", cpu=8000), node("n1")]
_PODS = [
    pod("a", cpu=500),
    pod("b", cpu=1500, owners=owner("ds", kind="DaemonSet")),
    pod("c", cpu=700),
]
# Equal to "a" as a dataclass (annotations are not compared), but a mirror pod.
_MIRROR_A = Pod(
    "a", containers=_PODS[0].containers, annotations={MIRROR_ANNOTATION: "x"}, owners=_PODS[0].owners
)
_DELETED = Pod("d", containers=_PODS[2].containers, deletion_time=0.0)
_CHOICES = [*_PODS, _MIRROR_A, _DELETED]

_CALLS = st.lists(
    st.tuples(
        st.sampled_from(range(len(_NODES))),
        st.lists(st.sampled_from(range(len(_CHOICES))), max_size=4),
        st.sampled_from([0.0, 30.0, 100.0]),  # pod "d" becomes long-terminating after 60 s
        st.booleans(),
        st.booleans(),
        st.booleans(),  # the caller names the pods by a version (as a snapshot's pods_version)
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300)
@given(_CALLS)
def test_kept_answers_are_fresh_answers(calls: list[tuple[int, list[int], float, bool, bool, bool]]) -> None:
    memo = UtilizationMemo()
    versions: dict[tuple[int, ...], int] = {}  # one version per list of pods, as a snapshot gives
    for n, chosen, now, ignore_ds, ignore_mirror, versioned in calls:
        pods = [_CHOICES[i] for i in chosen]
        version = versions.setdefault(tuple(chosen), len(versions)) if versioned else None
        fresh = node_utilization(
            _NODES[n], pods, now, ignore_daemonsets=ignore_ds, ignore_mirror=ignore_mirror
        )
        kept = memo.utilization(
            _NODES[n], pods, now, ignore_daemonsets=ignore_ds, ignore_mirror=ignore_mirror, version=version
        )
        assert repr(kept) == repr(fresh)  # repr: NaN (all allocatable ignored) equals itself


def test_a_node_without_allocatable_cpu_raises_every_time() -> None:
    memo = UtilizationMemo()
    broken = node("n0", cpu=0)
    for _ in range(2):
        with pytest.raises(ValueError):
            memo.utilization(broken, [_PODS[0]], 0.0)
