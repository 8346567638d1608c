"""Invariants of the driver over random worlds, failures and ticks: deleting is never a guess.

Whatever the utilisation, taints, annotations and injected API or cloud failures: a node is deleted
(in the cloud or as a Node object) only if, at the start of that tick, it belonged to the configured
group and carried the force taint or a removal taint with a readable time; a Node object is deleted
only after its instance was terminated; no node outside the group is ever written to; nothing is
evicted.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event, given, settings
from hypothesis import strategies as st

from kubetide.escalator.driver import EscalatorDriver
from kubetide.escalator.taints import FORCE_TAINT_KEY, TAINT_KEY, has_force_taint, taint_time
from kubetide.model.api import ApiError
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

from .builders import KEY, T0, node, pod
from .driver_harness import esc_group

TAINTS = st.sampled_from(["none", "none", "tainted", "tainted", "garbage", "force"])
WRITES = ("add_node_taint", "remove_node_taint", "delete_node")


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[NodeView], list[Pod], set[tuple[str, str]], bool]:
    listed: list[NodeView] = []
    for i in range(draw(st.integers(0, 8))):
        mine = draw(st.booleans()) or i == 0
        n = node(
            f"{'n' if mine else 'x'}{i}",
            created=T0 - draw(st.integers(0, 5000)),
            ready=draw(st.booleans()),
            cordoned=draw(st.integers(0, 5)) == 0,
            annotations={"atlassian.com/no-delete": "x"} if draw(st.integers(0, 5)) == 0 else None,
        )
        kind = draw(TAINTS)
        taints: tuple[Taint, ...] = ()
        if kind == "tainted":
            taints = (Taint(TAINT_KEY, str(int(T0) - draw(st.integers(0, 1000))), "NoSchedule"),)
        elif kind == "garbage":
            taints = (Taint(TAINT_KEY, "later", "NoSchedule"),)
        elif kind == "force":
            taints = (Taint(FORCE_TAINT_KEY, "", "NoSchedule"),)
        labels = {KEY: "default"} if mine else {KEY: "other"}
        listed.append(replace(n, taints=taints, labels=labels))
    listed_pods = [
        pod(
            f"p{i}",
            draw(st.integers(0, 400)),
            draw(st.integers(0, 400)),
            node_name=draw(st.sampled_from(["", *(n.name for n in listed)])),
            daemonset=draw(st.integers(0, 4)) == 0,
        )
        for i in range(draw(st.integers(0, 6)))
    ]
    names = [n.name for n in listed]
    failures = (
        draw(st.sets(st.tuples(st.sampled_from(WRITES), st.sampled_from(names)), max_size=4))
        if names
        else set()
    )
    return listed, listed_pods, failures, draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(worlds(), st.lists(st.integers(1, 900), min_size=1, max_size=3), st.integers(0, 3))
def test_nothing_is_deleted_on_a_guess_and_nothing_outside_the_group_is_touched(
    world: tuple[list[NodeView], list[Pod], set[tuple[str, str]], bool], steps: list[int], min_nodes: int
) -> None:
    listed, listed_pods, failures, cloud_refuses = world
    cluster = RecordingClusterPort(listed, listed_pods)
    for method, name in failures:
        cluster.with_failure(method, name)
    mine = [n for n in listed if n.labels[KEY] == "default"]
    cloud = RecordingCloud().with_group("asg", min(min_nodes, len(mine)), 12, len(mine))
    for n in mine:
        cloud.with_node("asg", n)
    if cloud_refuses:
        cloud.with_failure("delete_nodes", group="asg")
    cluster.logging_cloud(cloud)
    driver = EscalatorDriver([esc_group(min_nodes=min_nodes, max_nodes=8)], cluster.listing(), cluster, cloud)

    now = T0
    for step in steps:
        before = {n.name: n for n in cluster.nodes.values() if n.labels[KEY] == "default"}
        deletable = {name for name, n in before.items() if has_force_taint(n) or taint_time(n) is not None}
        start = len(cluster.log)
        driver.tick(now)
        terminated: set[str] = set()
        for entry in cluster.log[start:]:
            method, target = entry[0], entry[1]
            if method == "cloud_delete":
                node_name = str(entry[2])
                assert node_name in deletable
                terminated.add(node_name)
            elif method != "increase_size":
                assert target in before, f"{method} on {target}, not a node of the group"
            if method == "delete_node":
                assert target in deletable and target in terminated
        event(f"nodes terminated: {bool(terminated)}")
        now += step
    assert cluster.calls_to("evict") == []
    assert not any(e.object.startswith("Node/x") for e in cluster.events)


def test_an_api_error_is_reported_not_raised() -> None:
    cluster = RecordingClusterPort([node("n0"), node("n1"), node("n2")])
    cluster.with_failure("add_node_taint", error=ApiError("forbidden"))
    cloud = cluster.logging_cloud(RecordingCloud().with_group("asg", 0, 5, 3))
    result = EscalatorDriver([esc_group()], cluster.listing(), cluster, cloud).tick(T0)
    assert len(result.errors) == 2 and all("forbidden" in e for e in result.errors)
