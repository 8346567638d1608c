"""A PodDisruptionBudget's disruptions are shared by the nodes one loop simulates removing (CA 1.31's
RemainingPdbTracker: core/scaledown/pdb/basic.go, spent in core/scaledown/planner/planner.go,
categorizeNodes). Issue 23, item 11: with one disruption allowed and two nodes each holding one
covered pod, CA marks one node unneeded; kubetide marked both."""

from __future__ import annotations

from ca_loop_harness import Harness, node, pod, template
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.pdb import RemainingPdbs
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector, Node
from kubetide.scheduling.drainability import PDB
from kubetide.testing.cloud import RecordingCloud

WEB = LabelSelector.parse(Node({"matchLabels": {"app": "web"}}))


def _setup(allowed: int, **flags: object) -> Harness:
    """n0 is busy (0.75, kept) with room for two 200m pods; n1 and n2 each run one web pod."""
    cloud = RecordingCloud().with_group("ng", 0, 10, target=3, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags(dict(flags)))
    for name in ("n0", "n1", "n2"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n0", labels={"app": "big"}))
    h.add_pod(pod("web-1", 200, node_name="n1"))
    h.add_pod(pod("web-2", 200, node_name="n2"))
    h.pdbs.append(PDB("default", WEB, allowed))
    return h


def test_one_disruption_makes_one_node_unneeded_the_first_in_candidate_order() -> None:
    """planner.go, categorizeNodes: n1 (first in the candidates' order) is removable and RemovePods spends
    the disruption; n2's pod is then blocked by the pdb rule (``DisruptionsAllowed < 1``)."""
    h = _setup(1)
    result = h.run(0.0)
    assert set(result.unneeded) == {"n1"}
    assert result.unremovable["n2"] == "BlockedByPod"
    assert result.blocking_pods["n2"] == ("default/web-2", "NotEnoughPdb")


def test_the_allowance_is_the_pdbs_own_again_each_loop() -> None:
    """static_autoscaler.go, initializeRemainingPdbTracker: SetPdbs from the lister every loop. n2 is
    skipped while recently unremovable; when rechecked, n1 (unneeded last loop, so first in the
    candidates' order: PreviousCandidates) takes the disruption again and n2 stays blocked. n1 is
    drained once unneeded for 10 minutes; n2 never while n1's pod is being replaced."""
    h = _setup(1, **{"unremovable-node-recheck-timeout": 60.0})
    h.run(0.0)
    assert h.run(30.0).unremovable["n2"] == "RecentlyUnremovable"
    again = h.run(60.0)
    assert set(again.unneeded) == {"n1"} and again.blocking_pods["n2"][1] == "NotEnoughPdb"
    h.run(601.0)
    assert h.evicted == ["web-1"]


def test_two_disruptions_make_both_nodes_unneeded() -> None:
    h = _setup(2)
    assert set(h.run(0.0).unneeded) == {"n1", "n2"}


def test_no_disruption_blocks_both() -> None:
    h = _setup(0)
    result = h.run(0.0)
    assert result.unneeded == {} and result.unremovable["n1"] == result.unremovable["n2"] == "BlockedByPod"


def test_a_node_taking_more_than_a_pdb_has_left_is_risky_and_drained_last() -> None:
    """basic.go, CanRemovePods: two covered pods against one disruption left is not ``inParallel``, so
    the node is risky (planner.go, categorizeNodes), and sortByRisk puts it after the other drain nodes
    in NodesToDelete: with --max-drain-parallelism=1 the other node is drained first."""
    h = _setup(1, **{"max-drain-parallelism": 1})
    # n1: two web pods (each allowed by the rule alone) that only n0 takes, so none lands on n2.
    on_n0 = {"kubernetes.io/hostname": "n0"}
    h.pods["web-1"] = h.pods["web-1"].evolve(node_selector=on_n0)
    h.add_pod(pod("web-1b", 200, node_name="n1").evolve(node_selector=on_n0))
    del h.pods["web-2"]
    h.add_pod(pod("other-2", 200, node_name="n2", labels={"app": "other"}))
    h.pods["big"] = pod("big", 1000, node_name="n0", labels={"app": "big"})  # 0.5: kept; room for all three
    first = h.run(0.0)
    assert list(first.unneeded) == ["n1", "n2"]  # n1 first, and risky
    h.run(601.0)
    assert h.evicted == ["other-2"]


def test_a_safe_to_evict_pod_skips_the_rule_but_spends_the_disruption() -> None:
    """The pdb rule comes after safe-to-evict (rules.go, Default), but RemovePods counts every pod to
    reschedule the PDB covers: a safe-to-evict web pod on n1 uses the one disruption, so n2 is blocked."""
    h = _setup(1)
    p = h.pods["web-1"]
    h.pods["web-1"] = p.evolve(annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"})
    result = h.run(0.0)
    assert set(result.unneeded) == {"n1"} and result.blocking_pods["n2"][1] == "NotEnoughPdb"


def _pods(labels: list[str]) -> list[Pod]:
    return [pod(f"p{i}", labels={"app": app}) for i, app in enumerate(labels)]


@settings(max_examples=60, deadline=None)
@given(
    allowed=st.lists(st.integers(-1, 3), min_size=1, max_size=3),
    batches=st.lists(st.lists(st.sampled_from(["web", "db", "other"]), max_size=4), max_size=5),
)
def test_tracker_is_basic_remaining_pdb_tracker(allowed: list[int], batches: list[list[str]]) -> None:
    """basic.go: CanRemovePods' inParallel and RemovePods, against a plain transcription of it."""
    selectors = [WEB, LabelSelector.parse(Node({"matchLabels": {"app": "db"}})), LabelSelector()]
    pdbs = [PDB("default", selectors[i], a) for i, a in enumerate(allowed)]
    tracker = RemainingPdbs(pdbs)
    left = list(allowed)
    for labels in batches:
        pods = _pods(labels)
        in_parallel = True
        for i, pdb in enumerate(pdbs):
            count = 0
            for p in pods:
                if pdb.covers(p):
                    count += 1
                    if left[i] < 1 or left[i] < count:
                        in_parallel = False
        assert tracker.in_parallel(pods) == in_parallel
        tracker.remove_pods(pods)
        for i, pdb in enumerate(pdbs):
            left[i] -= sum(1 for p in pods if pdb.covers(p))
        assert [p.disruptions_allowed for p in tracker.remaining()] == left
