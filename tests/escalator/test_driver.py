"""The Escalator loop driver and executor against a recording cluster and cloud: what is called, in
which order, what survives a failure, what dry mode and a restart do."""

from __future__ import annotations

import math
from dataclasses import replace

from kubetide.escalator.driver import EscalatorDriver
from kubetide.escalator.executor import ActionKind
from kubetide.escalator.reasons import EventReason
from kubetide.escalator.taints import TAINT_KEY, taint_time
from kubetide.model.api import ApiError, ClusterPort
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

from .builders import T0, node, nodes, pod, pods
from .driver_harness import COOL_DOWN, HARD, SOFT, esc_group, metric, setup


def _reasons(cluster: RecordingClusterPort) -> list[str]:
    return [e.reason for e in cluster.events]


# --- scale-up


def test_scale_up_untaints_the_newest_tainted_nodes_then_grows_the_cloud() -> None:
    listed = nodes(2) + nodes(2, prefix="t", created=T0 - 100, tainted_at=T0 - 30)
    # 4000m requested on 2000m of untainted capacity: 200% -> ceil(2 * 130 / 70) = 4 nodes.
    driver, cluster, cloud = setup(listed, pods(20, 200, 0))
    result = driver.tick(T0)
    assert result.decisions[0].delta == 4
    assert cluster.log == [
        ("remove_node_taint", "t1", TAINT_KEY),
        ("remove_node_taint", "t0", TAINT_KEY),
        ("increase_size", "asg", 2),
    ]
    assert cloud.groups["asg"].target == 6
    memory = driver.memory("default")
    assert memory.lock.is_locked and memory.lock.requested_nodes == 2
    assert _reasons(cluster) == ["EscalatorUntaint", "EscalatorUntaint", "EscalatorScaleUp"]
    assert metric(result, "escalator_node_group_scale_lock", node_group="default") == 1.0
    assert metric(result, "escalator_node_group_untaint_event", node_group="default") == 4.0
    assert metric(result, "escalator_node_group_scale_delta", node_group="default") == 4.0
    assert metric(result, "escalator_node_group_tainted_nodes", node_group="default") == 2.0
    assert metric(result, "escalator_node_group_cpu_percent", node_group="default") == 200.0
    assert metric(result, "escalator_run_count") == 1.0
    labels = {"cloud_provider": "test", "id": "asg", "node_group": "asg"}
    assert metric(result, "escalator_cloud_provider_target_size", **labels) == 4.0

    # The scale lock holds the group still for the cool-down: nothing is called.
    cluster.log.clear()
    held = driver.tick(T0 + 30)
    assert cluster.log == [] and held.decisions[0].delta == 2
    assert _reasons(cluster)[-1] == EventReason.SCALE_LOCK_HELD


def test_a_refused_cloud_increase_takes_no_scale_lock() -> None:
    driver, cluster, cloud = setup(nodes(2), pods(20, 200, 0))
    cloud.with_failure("increase_size", group="asg")
    result = driver.tick(T0)
    run = result.groups[0]
    assert run.execution.increase_failed
    assert run.decision is not None and run.memory == run.decision.memory_if_increase_fails
    assert not driver.memory("default").lock.is_locked
    assert any("increase_size failed" in e for e in result.errors)
    assert "EscalatorScaleUpFailed" in _reasons(cluster)
    # Next tick asks again rather than waiting on nodes that were never requested.
    driver.tick(T0 + 30)
    assert len(cloud.calls_to("increase_size")) == 2


# --- scale-down


def test_slow_removal_taints_the_oldest_node_keeping_its_other_taints() -> None:
    listed = nodes(4)
    dedicated = Taint("dedicated", "batch", "NoSchedule")
    listed[0] = replace(listed[0], taints=(dedicated,))
    driver, cluster, _ = setup(listed, pods(12, 100, 0), taint_effect="NoExecute")  # 1200m/4000m = 30%
    result = driver.tick(T0)
    assert result.decisions[0].delta == -1
    assert cluster.log == [("add_node_taint", "n0", Taint(TAINT_KEY, str(math.floor(T0)), "NoExecute"))]
    assert cluster.nodes["n0"].taints == (dedicated, Taint(TAINT_KEY, "1700000000", "NoExecute"))
    assert metric(result, "escalator_node_group_taint_event", node_group="default") == 1.0


def test_fast_removal_taints_the_fast_rate_of_oldest_nodes() -> None:
    driver, cluster, _ = setup(nodes(4))  # no pods: 0%
    driver.tick(T0)
    assert [c.target for c in cluster.calls_to("add_node_taint")] == ["n0", "n1"]
    assert [taint_time(cluster.nodes[n]) for n in ("n0", "n1")] == [1_700_000_000.0] * 2


# --- reaping


def _reap_world() -> tuple[list[NodeView], list[Pod]]:
    listed = [
        *nodes(3),
        node("busy", created=T0 - 5000, tainted_at=T0 - 90),
        node("empty", created=T0 - 5000, tainted_at=T0 - 90),
        node("old", created=T0 - 5000, tainted_at=T0 - 700),
        node("fresh", created=T0 - 5000, tainted_at=T0 - 30),
    ]
    # 1800m of 3000m untainted: 60%, between the taint and scale-up thresholds: reap only.
    listed_pods = [
        pod("on-busy", 100, 0, node_name="busy", phase="Running"),
        pod("on-old", 100, 0, node_name="old", phase="Running"),
        pod("ds-on-empty", 100, 0, node_name="empty", phase="Running", daemonset=True),
        *pods(16, 100, 0),
    ]
    return listed, listed_pods


def test_reaping_deletes_empty_nodes_after_the_soft_grace_and_any_after_the_hard_one() -> None:
    driver, cluster, cloud = setup(*_reap_world())
    result = driver.tick(T0)
    assert result.decisions[0].delta == 0
    # The cloud terminates (lowering the target) before the Node object goes, node by node.
    assert cluster.log == [
        ("cloud_delete", "asg", "empty"),
        ("delete_node", "empty"),
        ("cloud_delete", "asg", "old"),
        ("delete_node", "old"),
    ]
    assert set(cluster.nodes) == {"n0", "n1", "n2", "busy", "fresh"}
    assert cloud.groups["asg"].target == 5
    assert cluster.calls_to("evict") == []  # Escalator never evicts: the hard period kills what runs
    assert metric(result, "escalator_node_group_pods_evicted", node_group="default") == 1.0


def test_the_no_delete_annotation_keeps_a_due_node() -> None:
    listed, listed_pods = _reap_world()
    listed[4] = node(
        "empty", created=T0 - 5000, tainted_at=T0 - 900, annotations={"atlassian.com/no-delete": "debugging"}
    )
    driver, cluster, _ = setup(listed, listed_pods)
    driver.tick(T0)
    assert [c.target for c in cluster.calls_to("delete_node")] == ["old"]


def test_an_unreadable_taint_time_is_never_a_reason_to_delete() -> None:
    listed, listed_pods = _reap_world()
    listed[4] = replace(listed[4], taints=(Taint(TAINT_KEY, "soon", "NoSchedule"),))
    driver, cluster, _ = setup(listed, listed_pods)
    driver.tick(T0)
    assert "empty" not in [c.target for c in cluster.calls_to("delete_node")]


# --- dry mode


def test_dry_mode_calls_nothing_and_reports_what_it_would_do() -> None:
    driver, cluster, cloud = setup(nodes(4), dry_mode=True)
    result = driver.tick(T0)
    assert (
        cluster.calls == cluster.events == []
        and cloud.calls_to("delete_nodes") == cloud.calls_to("increase_size") == []
    )
    assert [(a.kind, a.target, a.dry_run) for a in result.actions] == [
        (ActionKind.TAINT, "n0", True),
        (ActionKind.TAINT, "n1", True),
    ]
    assert driver.memory("default").taint_tracker == ("n0", "n1")
    assert all(not n.taints for n in cluster.nodes.values())


def test_driver_dry_run_reports_a_scale_up_without_calling_the_cloud() -> None:
    driver, cluster, cloud = setup(nodes(2), pods(20, 200, 0), dry_run=True)
    result = driver.tick(T0)
    assert cloud.calls_to("increase_size") == [] and cluster.calls == cluster.events == []
    assert [(a.kind, a.count, a.dry_run) for a in result.actions] == [(ActionKind.INCREASE, 4, True)]
    assert driver.memory("default").lock.is_locked  # upstream's dry mode takes the lock too


# --- failures


def test_a_failed_taint_does_not_stop_the_others_and_that_node_is_never_deleted() -> None:
    driver, cluster, _ = setup(nodes(4))
    cluster.with_failure("add_node_taint", "n0")
    result = driver.tick(T0)
    assert [entry[1] for entry in cluster.log] == ["n1"]
    assert [a.target for a in result.groups[0].execution.errors] == ["n0"]
    assert any("n0" in e for e in result.errors)
    warning = [e for e in cluster.events if e.type == "Warning"]
    assert [(w.object, w.reason) for w in warning] == [("Node/n0", "EscalatorTaintFailed")]
    driver.tick(T0 + HARD + 1)
    deleted = [c.target for c in cluster.calls_to("delete_node")]
    assert "n1" in deleted and "n0" not in deleted


def test_a_failed_node_delete_does_not_stop_the_next_one() -> None:
    listed, listed_pods = _reap_world()
    driver, cluster, _ = setup(listed, listed_pods)
    cluster.with_failure("delete_node", "empty")
    result = driver.tick(T0)
    assert ("delete_node", "old") in cluster.log
    labels = {"node_group": "default", "node": "empty"}
    assert metric(result, "escalator_node_delete_errors", **labels) == 1.0


def test_a_cloud_refusal_keeps_the_node_object() -> None:
    listed, listed_pods = _reap_world()
    driver, cluster, cloud = setup(listed, listed_pods)
    cloud.with_failure("delete_nodes", group="asg")
    result = driver.tick(T0)
    assert cluster.calls_to("delete_node") == []
    assert len(result.groups[0].execution.errors) == 2


def test_a_group_that_cannot_run_does_not_stop_the_next() -> None:
    cluster = RecordingClusterPort(nodes(4))
    cloud = RecordingCloud().with_group("asg", 1, 10, 4)
    for n in cluster.nodes.values():
        cloud.with_node("asg", n)
    groups = [esc_group(name="gone", cloud_provider_group_name="missing"), esc_group()]
    result = EscalatorDriver(groups, cluster.listing(), cluster, cloud).tick(T0)
    assert result.groups[0].error == "could not find node group" and result.groups[0].decision is None
    assert [c.target for c in cluster.calls_to("add_node_taint")] == ["n0", "n1"]
    assert ("NodeGroup/gone", "EscalatorRunFailed") in [(e.object, e.reason) for e in cluster.events]


def test_an_api_error_on_untaint_still_grows_the_cloud() -> None:
    listed = nodes(2) + nodes(1, prefix="t", created=T0 - 100, tainted_at=T0 - 30)
    driver, cluster, _ = setup(listed, pods(20, 200, 0))
    cluster.with_failure("remove_node_taint", error=ApiError("conflict"))
    result = driver.tick(T0)
    assert ("increase_size", "asg", 3) in cluster.log
    assert [a.kind for a in result.groups[0].execution.errors] == [ActionKind.UNTAINT]


# --- restarts


def test_a_restarted_driver_reads_its_taints_back_neither_repeating_nor_forgetting_them() -> None:
    driver, cluster, cloud = setup(nodes(4))
    driver.tick(T0)  # fast removal: n0 and n1 tainted at T0
    tainted = {n: taint_time(cluster.nodes[n]) for n in ("n0", "n1")}
    restarted = EscalatorDriver(driver.groups, cluster.listing(), cluster, cloud)
    restarted.tick(T0 + 30)
    retainted = [c.target for c in cluster.calls_to("add_node_taint")]
    assert retainted == ["n0", "n1", "n2"]  # only the remaining untainted node above the minimum
    assert {n: taint_time(cluster.nodes[n]) for n in ("n0", "n1")} == tainted
    restarted.tick(T0 + SOFT + 1)  # empty, past the soft grace counted from T0
    assert [c.target for c in cluster.calls_to("delete_node")] == ["n0", "n1"]


def test_restart_forgets_the_scale_lock_as_escalator_does() -> None:
    driver, _, cloud = setup(nodes(2), pods(20, 200, 0))
    driver.tick(T0)
    driver.tick(T0 + 30)
    assert len(cloud.calls_to("increase_size")) == 1
    driver.restart()
    assert driver.memory("default").lock.lock_time is None
    driver.tick(T0 + 31)
    assert len(cloud.calls_to("increase_size")) == 2


def test_the_recording_port_implements_every_cluster_port_method() -> None:
    wanted = {name for name in vars(ClusterPort) if not name.startswith("_")}
    assert wanted and wanted <= set(dir(RecordingClusterPort))


def test_the_tick_result_reads_as_escalator_logs() -> None:
    driver, _, _ = setup(nodes(4), dry_mode=True)
    result = driver.tick(T0)
    assert len(result.dry_run_actions) == 2
    assert result.log_lines()[0].startswith("nodegroup=default delta=-2 utilisation below")
    assert result.log_lines()[1] == "nodegroup=default drymode taint n0 x1: ok"


def test_the_scale_lock_metrics_follow_upstream() -> None:
    driver, _, _ = setup(nodes(2), pods(20, 200, 0))
    driver.tick(T0)
    held = driver.tick(T0 + 30)
    assert metric(held, "escalator_node_group_scale_lock_check_was_locked", node_group="default") == 2.0
    released = driver.tick(T0 + COOL_DOWN + 1)
    # Released after the cool-down, then taken again by the next scale-up (no node ever arrived).
    assert metric(released, "escalator_node_group_scale_lock", node_group="default") == 1.0
    [observed] = [s for s in released.observations if s.name == "escalator_node_group_scale_lock_duration"]
    assert observed.value == COOL_DOWN + 1


def test_below_the_discovered_minimum_untaints_before_anything_else() -> None:
    listed = [*nodes(2), node("t0", created=T0 - 100, tainted_at=T0 - 30)]
    # min_nodes and max_nodes both 0: taken from the cloud group (min 3) on every run.
    driver, cluster, _ = setup(listed, min_size=3, min_nodes=0, max_nodes=0)
    result = driver.tick(T0)
    assert cluster.log == [("remove_node_taint", "t0", TAINT_KEY)]
    assert metric(result, "escalator_node_group_untaint_event", node_group="default") == 1.0


def test_upstream_order_unhealthy_taints_then_force_deletes_then_untaint_then_the_cloud() -> None:
    listed = [
        *nodes(4),
        node("bad", created=T0 - 3600, ready=False),
        node("f", created=T0 - 3600, force=True),
        node("t0", created=T0 - 100, tainted_at=T0 - 30),
    ]
    driver, cluster, _ = setup(
        listed,
        pods(20, 400, 0),  # 8000m on 5000m untainted: 160% -> 7 nodes
        max_size=20,
        max_nodes=20,  # room for all 7 (max_nodes is a hard limit: see the test below)
        unhealthy_node_grace_period="5m",
        health_check_newest_nodes_percent=100,
        max_unhealthy_nodes_percent=50,
    )
    result = driver.tick(T0)
    assert result.decisions[0].delta == 7
    taint = Taint(TAINT_KEY, "1700000000", "NoSchedule")
    assert cluster.log == [
        ("add_node_taint", "bad", taint),
        ("cloud_delete", "asg", "f"),
        ("delete_node", "f"),
        ("remove_node_taint", "t0", TAINT_KEY),
        ("increase_size", "asg", 6),
    ]


def test_max_nodes_bounds_untaint_and_increase_even_below_the_cloud_groups_maximum() -> None:
    """Escalator's docs: ``max_nodes`` is a hard limit, a scale-up is clamped to it. Upstream's
    ``calculateNodesToAdd`` clamps to the cloud group's MaxSize only; kubetide clamps to both."""
    listed = [*nodes(5), node("t0", created=T0 - 100, tainted_at=T0 - 30)]
    # 8000m on 5000m untainted: 160% -> 7 nodes wanted; the cloud group could take 14 more.
    driver, cluster, _ = setup(listed, pods(20, 400, 0), max_size=20, max_nodes=8)
    result = driver.tick(T0)
    assert result.decisions[0].delta == 7  # the decided delta, as upstream returns it
    assert cluster.log == [("remove_node_taint", "t0", TAINT_KEY), ("increase_size", "asg", 2)]


def test_instances_on_their_way_count_toward_max_nodes() -> None:
    # The cloud group already wants 9 (3 instances not registered yet): 6 untainted + 3 = max_nodes 9.
    driver, cluster, cloud = setup(nodes(6), pods(30, 400, 0), max_size=20, max_nodes=9)
    cloud.groups["asg"].target = 9
    driver.tick(T0)
    assert cluster.log == []
