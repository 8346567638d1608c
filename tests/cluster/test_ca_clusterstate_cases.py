"""Cluster-state cases: ``readiness``, ``acceptable_range``, ``incorrect_node_group_size``,
``cluster_health``, ``upcoming_nodes``, ``scale_up_request`` and the registry's backoff case."""

from __future__ import annotations

from typing import Any

import pytest
from ca_builders import cnode
from ca_cases import by_id, case_version, cases

from kubetide.cloud.instance import Instance, InstanceState, InstanceStatus
from kubetide.cluster.clusterstate.incorrect import IncorrectSize, incorrect_size
from kubetide.cluster.clusterstate.ranges import acceptable_range
from kubetide.cluster.clusterstate.readiness import Readiness, classify_node
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.clusterstate.requests import register_scale_up
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud

NOT_READY = Taint("node.kubernetes.io/not-ready", "", "NoSchedule")
NOW = 0.0


@pytest.mark.parametrize("case", cases("readiness"))
def test_readiness(case: dict[str, Any]) -> None:
    inp = case["input"]
    startup = inp["max_node_startup_time_s"]
    if "node" in inp:
        n = cnode("n", ready=inp["node"]["ready"], created=NOW - inp["node"]["created_s_ago"])
        assert classify_node(n, NOW, startup, deleted=False) == case["expected"]["bucket"]
    else:
        got = [
            classify_node(
                cnode(
                    f"n{i}",
                    ready=s["ready_condition"],
                    created=NOW - s["created_s_ago"],
                    taints=(NOT_READY,) if s["taint_not_ready"] else (),
                ),
                NOW,
                startup,
                deleted=False,
            )
            for i, s in enumerate(inp["node_states"])
        ]
        assert got == case["expected"]["buckets"]


@pytest.mark.parametrize("case", cases("acceptable_range"))
def test_acceptable_range(case: dict[str, Any]) -> None:
    inp = case["input"]
    for gid, target in inp["target_sizes"].items():
        counts = inp["readiness_counts"][gid]
        r = acceptable_range(
            target,
            counts.get("long_unregistered", 0),
            inp["scale_up_increase"].get(gid, 0),
            inp["scale_down_request_count"].get(gid, 0),
        )
        want = case["expected"][gid]
        assert (r.min_nodes, r.max_nodes, r.current_target) == (
            want["min_nodes"],
            want["max_nodes"],
            want["current_target"],
        )


@pytest.mark.parametrize("case", cases("incorrect_node_group_size"))
def test_incorrect_node_group_size(case: dict[str, Any]) -> None:
    inp = case["input"]
    if "updates" in inp:
        ng = inp["node_group"]
        previous = None
        for upd, want in zip(inp["updates"], case["expected"]["after_each"], strict=True):
            r = acceptable_range(ng["target"], 0)
            previous = incorrect_size(previous, Readiness.from_counts(ready=upd["registered"]), r, upd["t_s"])
            assert previous == IncorrectSize(want["current"], want["expected"], want["first_observed_s"])
        return
    got = {}
    for gid, target in inp["current_target"].items():
        counts = inp["readiness_counts"][gid]
        readiness = Readiness.from_counts(
            ready=counts["registered"],
            unregistered=counts.get("unregistered", 0),
            long_unregistered=counts.get("long_unregistered", 0),
        )
        prev = inp["previous_incorrect"].get(gid)
        previous = (
            IncorrectSize(prev["current"], prev["expected"], prev["first_observed_s"]) if prev else None
        )
        found = incorrect_size(previous, readiness, acceptable_range(target, 0), inp["now_s"])
        if found is not None:
            got[gid] = {
                "current": found.current_size,
                "expected": found.expected_size,
                "first_observed_s": found.first_observed,
            }
    assert got == case["expected"]["incorrect"]


def _registry_from_groups(
    inp: dict[str, Any], options: AutoscalingOptions
) -> tuple[ClusterStateRegistry, list]:
    """Groups as the cluster-health and upcoming cases describe them: node states in words."""
    cloud = RecordingCloud()
    nodes = []
    for gid, g in inp["groups"].items():
        cloud.with_group(gid, g.get("min", 0), g.get("max", 10), g["target"])
        for i, state in enumerate(g["nodes"], start=1):
            if state.startswith("ready"):
                n = cnode(f"{gid}-{i}")
                if "ToBeDeleted" in state:
                    n = cnode(
                        f"{gid}-{i}", taints=(Taint("ToBeDeletedByClusterAutoscaler", "1", "NoSchedule"),)
                    )
            elif "60s ago" in state:
                n = cnode(f"{gid}-{i}", ready=False, created=NOW - 60)
            else:
                n = cnode(f"{gid}-{i}", ready=False)
            cloud.with_node(gid, n)
            nodes.append(n)
    csr = ClusterStateRegistry(cloud, options)
    for gid, g in inp["groups"].items():
        if "scale_up" in g:
            csr.register_scale_up(gid, g["scale_up"], NOW)
    return csr, nodes


@pytest.mark.parametrize("case", cases("cluster_health"))
def test_cluster_health(case: dict[str, Any]) -> None:
    inp, want = case["input"], case["expected"]
    options = AutoscalingOptions(
        ok_total_unready_count=inp["ok_total_unready_count"],
        max_total_unready_percentage=inp["max_total_unready_percentage"],
        max_node_provision_time=inp.get("max_node_provision_time_s", 900.0),
    )
    if "groups" in inp:
        csr, nodes = _registry_from_groups(inp, options)
        csr.update_nodes(nodes, NOW)
        assert csr.is_cluster_healthy() == want["cluster_healthy"]
        if "ng1_healthy" in want:
            assert csr.is_node_group_healthy("ng1") == want["ng1_healthy"]
        if "status" in want:
            st = want["status"]
            assert csr.cluster_scale_up_activity(NOW) == st["cluster_scale_up"]
            assert csr.scale_up_activity("ng1", NOW) == st["ng1_scale_up"]
            assert csr.scale_up_activity("ng2", NOW) == st["ng2_scale_up"]
    elif "steps" in inp:
        # ca-health-empty-group: an empty group, then the same group scaling up from zero.
        cloud = RecordingCloud().with_group("ng1", 0, 10, 0)
        csr = ClusterStateRegistry(cloud, options)
        csr.update_nodes([], NOW)
        for step, t in (("step1", NOW), ("step2", NOW)):
            if step == "step2":
                cloud.groups["ng1"].target = 3
                csr.register_scale_up("ng1", 3, NOW - 3)
                csr.update_nodes([], t)
            w = want[step]
            assert csr.is_cluster_healthy() == w["cluster_healthy"]
            assert csr.is_node_group_healthy("ng1") == w["ng1_healthy"]
            assert csr.is_node_group_scaling_up("ng1") == w["ng1_scaling_up"]
    else:
        # ca-health-expired-scaleup: the request times out, is backed off, and leaves the group short.
        ng = inp["node_group"]
        cloud = RecordingCloud().with_group(ng["id"], ng["min"], ng["max"], ng["target"])
        nodes = [cnode(f"ng1-{i}") for i in range(ng["ready_nodes"])]
        for n in nodes:
            cloud.with_node("ng1", n)
        csr = ClusterStateRegistry(cloud, options)
        csr.register_scale_up("ng1", inp["scale_up"]["delta"], NOW - inp["scale_up"]["registered_s_ago"])
        result = csr.update_nodes(nodes, NOW)
        assert csr.is_cluster_healthy() == want["cluster_healthy"]
        assert csr.is_node_group_healthy("ng1") == want["ng1_healthy"]
        (failure,) = result.failed_scale_ups
        f = want["scale_up_failure"]
        assert (failure.error.error_class.name, failure.error.error_code, failure.error.error_message) == (
            f["class"],
            f["code"],
            f["message"],
        )
        assert failure.delta == f["delta"]
        assert [e.reason for e in result.events] == ["ScaleUpTimedOut"]


def test_upcoming_nodes_per_group() -> None:
    case = by_id("ca-upcoming-nodes")
    inp = case["input"]
    options = AutoscalingOptions(
        max_node_startup_time=inp["max_node_startup_time_s"],
        max_node_provision_time=inp["max_node_provision_time_s"],
    )
    csr, nodes = _registry_from_groups(inp, options)
    csr.update_nodes(nodes, NOW)
    counts, registered = csr.upcoming_nodes(NOW)
    assert counts == case["expected"]["upcoming"]
    assert not set(case["expected"]["absent_from_result"]) & set(counts)
    assert {g: list(n) for g, n in registered.items() if n} == case["expected"]["registered_upcoming"]


def test_unregistered_becomes_long_unregistered() -> None:
    case = by_id("ca-unregistered-becomes-long")
    inp, want = case["input"], case["expected"]
    ng = inp["node_group"]
    cloud = RecordingCloud().with_group(ng["id"], ng["min"], ng["max"], ng["target"])
    for iid in inp["cloud_instances"]:
        cloud.with_instance("ng1", Instance(iid, InstanceStatus(InstanceState.Running)))
    options = AutoscalingOptions(max_node_provision_time=inp["max_node_provision_time_s"])
    csr = ClusterStateRegistry(cloud, options)
    registered = [cnode(n) for n in inp["registered_nodes"]]
    csr.register_scale_up("ng1", 1, NOW - 60)
    csr.update_nodes(registered, NOW - 60)
    assert [u.instance_id for u in csr.unregistered_nodes()] == want["step1"]["unregistered"]
    assert csr.upcoming_nodes(NOW - 60)[0] == want["step1"]["upcoming"]
    csr.update_nodes(registered, NOW + 60)
    assert [u.instance_id for u in csr.unregistered_nodes()] == want["step2"]["unregistered"]
    assert csr.upcoming_nodes(NOW + 60)[0] == want["step2"]["upcoming"]
    csr.update_nodes([*registered, cnode("ng1-2")], NOW + 60)
    assert [u.instance_id for u in csr.unregistered_nodes()] == want["step3"]["unregistered"]


def test_scale_up_request_updates() -> None:
    case = by_id("ca-scaleup-request-update")
    provision = case["input"]["max_node_provision_time_s"]
    request = None
    for op, want in zip(case["input"]["ops"], case["expected"]["after_each"], strict=True):
        request = register_scale_up(request, "ng1", op["delta"], op["t_s"], provision)
        if want is None:
            assert request is None
        else:
            assert request is not None
            assert (request.increase, request.time, request.expected_add_time) == (
                want["increase"],
                want["time_s"],
                want["expected_add_time_s"],
            )


def _expired_scale_up(case: dict[str, Any], version: str) -> tuple[ClusterStateRegistry, Any]:
    inp = case["input"]
    ng = inp["node_group"]
    cloud = RecordingCloud().with_group(ng["id"], 0, 10, ng["target"])
    nodes = [cnode(f"ng1-{i}") for i in range(ng["registered_ready"])]
    for n in nodes:
        cloud.with_node("ng1", n)
    options = AutoscalingOptions(
        ca_compatibility_version=version, max_node_provision_time=inp["max_node_provision_time_s"]
    )
    csr = ClusterStateRegistry(cloud, options)
    csr.register_scale_up("ng1", inp["scale_up"]["delta"], NOW - inp["scale_up"]["registered_s_ago"])
    return csr, csr.update_nodes(nodes, NOW)


def test_expired_scale_up_reverts_the_full_increase() -> None:
    # A 1.36+ case: under --ca-compatibility-version=1.36, --revert-timed-out-scale-ups defaults to true;
    # the registry decides the revert, the loop executes DecreaseTargetSize.
    case = by_id("ca-expired-scaleup-reverts-full-increase")
    assert case_version(case) == "1.36"
    csr, result = _expired_scale_up(case, case_version(case))
    assert [(r.group, r.delta) for r in result.reverts] == [
        ("ng1", case["expected"]["decrease_target_size_called_with"])
    ]
    assert ("ng1" not in csr.scale_up_requests) == case["expected"]["request_removed"]


def test_with_ca_1_31_an_expired_scale_up_keeps_its_target() -> None:
    """CA 1.31 clusterstate.go, updateScaleRequests: the timed-out request is dropped and the group
    backed off, with no DecreaseTargetSize (fixNodeGroupSize lowers it a loop later: see
    test_ca_autoscaler_loop.py::test_scale_up_times_out_keeps_the_target_and_the_size_is_fixed_a_loop_later)."""
    csr, result = _expired_scale_up(by_id("ca-expired-scaleup-reverts-full-increase"), "1.31")
    assert result.reverts == () and [f.group for f in result.failed_scale_ups] == ["ng1"]
    assert "ng1" not in csr.scale_up_requests


def test_scale_up_timeout_backs_off() -> None:
    case = by_id("ca-csr-scaleup-timeout-backoff")
    p, ng, want = case["input"]["params"], case["input"]["node_group"], case["expected"]
    cloud = RecordingCloud().with_group(ng["id"], ng["min"], ng["max"], ng["target"])
    nodes = [cnode(f"ng1-{i}") for i in range(case["input"]["ready_nodes"])]
    for n in nodes:
        cloud.with_node("ng1", n)
    options = AutoscalingOptions(
        initial_node_group_backoff_duration=p["initial_s"],
        max_node_group_backoff_duration=p["max_s"],
        node_group_backoff_reset_timeout=p["reset_s"],
        max_node_provision_time=p["max_node_provision_time_s"],
    )
    csr = ClusterStateRegistry(cloud, options)
    # Step 1: a +1 request 180s old times out.
    csr.register_scale_up("ng1", 1, NOW - 180)
    csr.update_nodes(nodes, NOW)
    w1 = want["after_step1"]
    assert csr.is_cluster_healthy() == w1["cluster_healthy"]
    assert csr.is_node_group_healthy("ng1") == w1["ng_healthy"]
    assert csr.is_safe_to_scale_up("ng1", NOW) == w1["safe_to_scale"]
    st = csr.backoff.status("ng1", NOW)
    assert st.error_info is not None
    e = w1["backoff_error"]
    assert (st.error_info.error_class.name, st.error_info.error_code, st.error_info.error_message) == (
        e["class"],
        e["code"],
        e["message"],
    )
    # Step 2: the 300s backoff is over 301s later.
    assert csr.is_safe_to_scale_up("ng1", NOW + 301) == want["after_step2"]["safe_to_scale"]
    # Step 3: the target was reverted by the loop; the test puts it back and a +1 times out after 121s.
    now2 = NOW + 301
    cloud.groups["ng1"].target = 4
    csr.register_scale_up("ng1", 1, now2 - 121)
    csr.update_nodes(nodes, now2)
    assert csr.is_safe_to_scale_up("ng1", now2) == want["after_step3"]["safe_to_scale"]
    st = csr.backoff.status("ng1", now2)
    assert (
        st.error_info is not None
        and st.error_info.error_message == want["after_step3"]["backoff_error_message"]
    )
    # Step 4: the second backoff doubled to 600s.
    assert csr.is_safe_to_scale_up("ng1", now2 + 301) == want["after_step4"]["safe_to_scale"]
    # Step 5: a successful scale-up does not clear the backoff.
    now3 = now2 + 301
    csr.register_scale_up("ng1", 1, now3)
    fourth = cnode("ng1-new")
    cloud.with_node("ng1", fourth)
    csr.update_nodes([*nodes, fourth], now3)
    assert "ng1" not in csr.scale_up_requests
    assert csr.is_safe_to_scale_up("ng1", now3) == want["after_step5"]["safe_to_scale"]
