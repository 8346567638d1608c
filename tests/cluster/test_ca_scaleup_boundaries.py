"""Every boundary of the scale-up and cluster-state side compared with CA 1.31's code (issue 23 item 5):
each is tested at the boundary itself and one tick either side. A Go ``a.Before(b)`` is ``a < b`` and
``a.After(b)`` is ``a > b``, so "expired" means strictly past, and the boundary instant is still inside."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ca_builders import cnode
from ca_loop_harness import Harness, node, pod, template

from kubetide.cloud.instance import NodeGroupAutoscalingOptions
from kubetide.cluster.backoff import ExponentialBackoff
from kubetide.cluster.clusterstate.health import is_cluster_healthy, is_node_group_healthy
from kubetide.cluster.clusterstate.incorrect import IncorrectSize, incorrect_size, size_fix_delta
from kubetide.cluster.clusterstate.ranges import AcceptableRange, acceptable_range
from kubetide.cluster.clusterstate.readiness import Readiness, classify_node, unregistered_bucket
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.clusterstate.requests import RequestOutcome, ScaleUpRequest, request_outcome
from kubetide.cluster.clusterstate.unregistered import UnregisteredNode, unregistered_to_delete
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import ReadinessBucket
from kubetide.cluster.scaleup.limits import CORES, ResourceLimits, cap_by_max_nodes_total
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.estimator import estimate
from kubetide.scheduling.limiter import ClusterCapacityThreshold, StaticThreshold, ThresholdLimiter
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.testing.cloud import RecordingCloud

TICK = 0.001
P = 900.0  # --max-node-provision-time
SIDES = [(-TICK, False), (0.0, False), (TICK, True)]  # (offset from the boundary, expired?)


# -- provision timeout ------------------------------------------------------------------------------


@pytest.mark.parametrize(("offset", "expired"), SIDES)
def test_scale_up_request_expires_strictly_after_the_provision_time(offset: float, expired: bool) -> None:
    """clusterstate.go updateScaleRequests: ``scaleUpRequest.ExpectedAddTime.Before(currentTime)``."""
    request = ScaleUpRequest("g", 1, 0.0, P)
    outcome = request_outcome(request, 1, P + offset)
    assert outcome is (RequestOutcome.TIMED_OUT if expired else RequestOutcome.PENDING)


@pytest.mark.parametrize(("offset", "expired"), SIDES)
def test_a_groups_own_provision_time_sets_the_deadline(offset: float, expired: bool) -> None:
    """clusterstate.go registerOrUpdateScaleUpNoLock: ``ExpectedAddTime: currentTime.Add(maxNodeProvisionTime)``
    with the group's ``MaxNodeProvisionTime`` (nodegroupconfig ``GetMaxNodeProvisionTime``)."""
    own = NodeGroupAutoscalingOptions(0.5, 0.5, 600.0, 1200.0, max_node_provision_time=120.0)
    cloud = RecordingCloud().with_group("g", 0, 5, target=1, options=own)
    csr = ClusterStateRegistry(cloud, AutoscalingOptions())
    csr.update_nodes([], 0.0)
    csr.register_scale_up("g", 1, 0.0)
    result = csr.update_nodes([], 120.0 + offset)
    assert bool(result.failed_scale_ups) is expired
    assert ("g" in csr.scale_up_requests) is not expired


@pytest.mark.parametrize(("offset", "expired"), SIDES)
def test_scale_up_progress_timeout_is_strict_as_the_provision_timeout(offset: float, expired: bool) -> None:
    """kubetide's --scale-up-progress-timeout compares as upstream compares its provision deadline
    (clusterstate.go updateScaleRequests, ``Before``): at the timeout itself the request still waits."""
    cloud = RecordingCloud().with_group("g", 0, 5, target=1)
    csr = ClusterStateRegistry(cloud, AutoscalingOptions(scale_up_progress_timeout=60.0))
    csr.update_nodes([], 0.0)
    csr.register_scale_up("g", 1, 0.0)
    result = csr.update_nodes([], 60.0 + offset)
    assert [f.error.error_code for f in result.failed_scale_ups] == (["progressTimeout"] if expired else [])


# -- backoff (utils/backoff/exponential_backoff.go) -------------------------------------------------


@pytest.mark.parametrize(("offset", "over"), SIDES)
def test_backoff_lasts_through_its_until_instant(offset: float, over: bool) -> None:
    """exponential_backoff.go BackoffStatus: not backed off once ``backoffUntil.Before(currentTime)``."""
    b = ExponentialBackoff(300.0, 1800.0, 10800.0)
    assert b.backoff("g", None, 0.0) == 300.0
    assert b.is_backed_off("g", 300.0 + offset) is not over


@pytest.mark.parametrize(("offset", "doubled"), SIDES)
def test_backoff_doubles_only_after_the_previous_one_ended(offset: float, doubled: bool) -> None:
    """exponential_backoff.go Backoff: ``if backoffInfo.backoffUntil.Before(currentTime) { duration = 2 *
    backoffInfo.duration }``, capped at the max; a failure at the until instant keeps the duration."""
    b = ExponentialBackoff(300.0, 500.0, 10800.0)
    b.backoff("g", None, 0.0)
    now = 300.0 + offset
    until = b.backoff("g", None, now)
    assert until == now + (500.0 if doubled else 300.0)  # 2 x 300 capped at 500


@pytest.mark.parametrize(("offset", "forgotten"), SIDES)
def test_backoff_is_forgotten_strictly_after_the_reset_timeout(offset: float, forgotten: bool) -> None:
    """exponential_backoff.go RemoveStaleBackoffData: ``lastFailedExecution.Add(backoffResetTimeout).Before(now)``."""
    b = ExponentialBackoff(300.0, 1800.0, 10800.0)
    b.backoff("g", None, 0.0)
    b.remove_stale(10800.0 + offset)
    assert (b.entry("g") is None) is forgotten


# -- scale-down requests, unregistered nodes, readiness ---------------------------------------------


@pytest.mark.parametrize(("offset", "dropped"), [(-TICK, False), (0.0, True), (TICK, True)])
def test_scale_down_request_is_dropped_at_its_expected_delete_time(offset: float, dropped: bool) -> None:
    """clusterstate.go updateScaleRequests keeps a scale-down request while
    ``scaleDownRequest.ExpectedDeleteTime.After(currentTime)``: at the expected time itself it goes
    (kubetide kept it one instant longer). The request widens the acceptable range (MaxNodes + 1)."""
    n = cnode("g-1")
    cloud = RecordingCloud().with_group("g", 0, 5, target=1).with_node("g", n)
    csr = ClusterStateRegistry(cloud, AutoscalingOptions())
    csr.register_scale_down("g", "g-1", 0.0)  # expected delete time: 0 + 5m
    csr.update_nodes([n], 300.0 + offset)
    assert (csr.scale_down_requests == []) is dropped
    assert csr.acceptable_ranges["g"].max_nodes == (1 if dropped else 2)


@pytest.mark.parametrize(("offset", "long"), SIDES)
def test_unregistered_becomes_long_unregistered_strictly_after_the_provision_time(
    offset: float, long: bool
) -> None:
    """clusterstate.go updateReadinessStats: ``unregistered.UnregisteredSince.Add(maxNodeProvisionTime).Before(currentTime)``."""
    bucket = unregistered_bucket(0.0, P + offset, P)
    assert bucket is (ReadinessBucket.LONG_UNREGISTERED if long else ReadinessBucket.UNREGISTERED)


@pytest.mark.parametrize(("offset", "removed"), SIDES)
def test_unregistered_instance_is_removed_strictly_after_the_provision_time(
    offset: float, removed: bool
) -> None:
    """static_autoscaler.go removeOldUnregisteredNodes: ``UnregisteredSince.Add(maxNodeProvisionTime).Before(currentTime)``,
    and at most ``size - MinSize`` of them (``possibleToDelete <= 0``: none)."""
    old = [UnregisteredNode("i-1", "g", 0.0)]
    assert bool(unregistered_to_delete(old, 1, 0, P + offset, P)) is removed
    assert unregistered_to_delete(old, 1, 1, P + 1.0, P) == []  # target == min size: nothing to remove


@pytest.mark.parametrize(("offset", "not_started"), [(-TICK, True), (0.0, False), (TICK, False)])
def test_not_started_until_the_startup_time(offset: float, not_started: bool) -> None:
    """clusterstate.go updateReadinessStats: NotStarted while
    ``node.CreationTimestamp.Time.Add(MaxNodeStartupTime).After(currentTime)`` (15m), then Unready."""
    n = cnode("n", ready=False, created=0.0)
    bucket = classify_node(n, 900.0 + offset, 900.0, False)
    assert bucket is (ReadinessBucket.NOT_STARTED if not_started else ReadinessBucket.UNREADY)


# -- health -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("unready", "total", "healthy"),
    [
        (3, 4, True),  # unready == --ok-total-unready-count (3): not above it
        (4, 5, False),
        (9, 20, True),  # 9 == 45% of 20: not above it
        (10, 20, False),
        (10, 23, True),  # 10 < 45% of 23 = 10.35
    ],
)
def test_cluster_health_needs_both_the_count_and_the_percentage_exceeded(
    unready: int, total: int, healthy: bool
) -> None:
    """clusterstate.go IsClusterHealthy: unhealthy iff ``totalUnready > OkTotalUnreadyCount &&
    float64(totalUnready) > MaxTotalUnreadyPercentage/100.0*float64(len(csr.nodes))``."""
    readiness = Readiness.from_counts(unready=unready, ready=total - unready)
    assert is_cluster_healthy(readiness, 3, 45.0) is healthy


@pytest.mark.parametrize(
    ("ready", "min_nodes", "healthy"),
    [
        (7, 10, True),  # 3 missing == --ok-total-unready-count
        (6, 10, False),  # 4 missing > 3 and > 45% of 6
        (20, 29, True),  # 9 missing == 45% of 20
        (20, 30, False),
    ],
)
def test_group_health_counts_ready_nodes_below_the_acceptable_minimum(
    ready: int, min_nodes: int, healthy: bool
) -> None:
    """clusterstate.go IsNodeGroupHealthy: ``unjustifiedUnready = MinNodes - len(Ready)`` when positive,
    unhealthy iff above the count and above the percentage of Ready + Unready + NotStarted."""
    acceptable = AcceptableRange(min_nodes, min_nodes, min_nodes)
    assert is_node_group_healthy(acceptable, Readiness.from_counts(ready=ready), 3, 45.0) is healthy


def test_a_group_with_a_target_and_no_node_is_healthy_only_while_its_nodes_are_requested() -> None:
    """clusterstate.go IsNodeGroupHealthy with no readiness: healthy iff ``CurrentTarget == 0 ||
    (MinNodes == 0 && CurrentTarget > 0)``; a scale-up request of the whole target makes MinNodes 0."""
    assert is_node_group_healthy(acceptable_range(0, 0), None, 3, 45.0)
    assert is_node_group_healthy(acceptable_range(2, 0, 2), None, 3, 45.0)
    assert not is_node_group_healthy(acceptable_range(2, 0, 1), None, 3, 45.0)
    assert not is_node_group_healthy(acceptable_range(2, 0), None, 3, 45.0)


# -- acceptable ranges and incorrect sizes ------------------------------------------------------------


def test_acceptable_range_bounds() -> None:
    """clusterstate.go updateAcceptableRanges: MinNodes = size - LongUnregistered - request Increase,
    MaxNodes = size + one per scale-down request, CurrentTarget = size."""
    assert acceptable_range(10, 2, 3, 4) == AcceptableRange(5, 14, 10)


@pytest.mark.parametrize(
    ("registered", "unregistered", "incorrect"),
    [(5, 0, False), (6, 0, True), (4, 0, True), (3, 2, False), (2, 2, True)],
)
def test_incorrect_size_outside_target_less_unregistered_to_target(
    registered: int, unregistered: int, incorrect: bool
) -> None:
    """clusterstate.go updateIncorrectNodeGroupSizes: incorrect iff ``len(Registered) > CurrentTarget ||
    len(Registered) < CurrentTarget - (Unregistered + LongUnregistered)`` (target 5 here)."""
    readiness = Readiness.from_counts(ready=registered, unregistered=unregistered)
    found = incorrect_size(None, readiness, acceptable_range(5, 0), 0.0)
    assert (found is not None) is incorrect


@pytest.mark.parametrize(("offset", "fixed"), SIDES)
def test_size_is_fixed_strictly_after_the_provision_time(offset: float, fixed: bool) -> None:
    """static_autoscaler.go fixNodeGroupSize: ``incorrectSize.FirstObserved.Add(maxNodeProvisionTime).Before(currentTime)``
    and ``delta < 0`` (a group above its target is never fixed this way)."""
    assert size_fix_delta(IncorrectSize(2, 5, 0.0), P + offset, P) == (-3 if fixed else None)
    assert size_fix_delta(IncorrectSize(6, 5, 0.0), P + 1.0, P) is None


# -- resource limits (core/scaleup/resource/manager.go) -----------------------------------------------


@pytest.mark.parametrize(("left", "allowed", "exceeded"), [(20, 2, False), (19, 1, True), (9, 0, True)])
def test_resource_limit_allows_a_delta_equal_to_what_is_left(left: int, allowed: int, exceeded: bool) -> None:
    """manager.go CheckDeltaWithinLimits: exceeded iff ``resourceDelta > resourceLeft``; ApplyLimits: no cap
    while ``newCount*resourceDelta <= limit``, else ``limit / resourceDelta``; computeBelowMax: ``max - total``
    while ``total < max``, else 0 (here 2 nodes of 10 cores asked, ``left`` cores left)."""
    limits = ResourceLimits({}, {CORES: 100})
    check = limits.check_quota({CORES: 100 - left}, {CORES: 10}, 2)
    assert (check.allowed, bool(check.exceeded)) == (allowed, exceeded)
    over = limits.check_quota({CORES: 120}, {CORES: 10}, 1)  # usage above the max: nothing left
    assert over.allowed == 0


@pytest.mark.parametrize(
    ("version", "reason"),
    [("1.31", "max cluster cpu limit reached"), ("1.36", 'exceeded quota: "cluster-wide", resources: cpu')],
)
def test_an_atomic_group_whose_whole_size_exceeds_a_limit_is_skipped(version: str, reason: str) -> None:
    """orchestrator.go IsNodeGroupResourceExceeded: the delta times ``numNodes`` (a ZeroOrMax group's
    ``max - target``) exceeding any limit skips the group, even if fewer nodes would fit; the reason is
    1.31's NewMaxResourceLimitReached (sorted resources) or 1.36's quota message."""
    atomic = replace(AutoscalingOptions().node_group_defaults(), zero_or_max_node_scaling=True)
    cloud = RecordingCloud().with_group("slice", 0, 4, target=0, template=template("slice"), options=atomic)
    flags = {"cores-total": "0:6", "ca-compatibility-version": version}  # 2-core nodes: 3 fit, not 4
    h = Harness(cloud, AutoscalingOptions.from_flags(flags))
    h.add_pod(pod("p", 1500))
    result = h.run(0.0)
    assert h.cloud.calls_to("increase_size") == []
    (event,) = [e for e in result.events if e.reason == "NotTriggerScaleUp"]
    assert reason in event.message


def _not_ready(name: str, cpu: int) -> NodeView:
    alloc = Resources({"cpu": cpu, "memory": 2**32, "pods": 110})
    return NodeView(
        name,
        labels={"kubernetes.io/hostname": name},
        allocatable=alloc,
        capacity=alloc,
        taints=(Taint("node.kubernetes.io/not-ready", "", "NoSchedule"),),
        ready=False,
        provider_id=name,
        creation_time=-100_000.0,
    )


@pytest.mark.parametrize(("cores_total", "scaled"), [(7, False), (8, True)])
def test_resource_usage_counts_group_targets_and_ready_nodes_of_no_group(
    cores_total: int, scaled: bool
) -> None:
    """manager.go coresMemoryTotal: ``int64(currentSize)*nodeCPU`` of each group's template plus the nodes
    of no autoscaled group among ScaleUp's ``nodes``, the ready ones: an Unready 8-core node of no group
    counts for nothing (kubetide counted every node's capacity). 4 cores used, 4 more for one node."""
    cloud = RecordingCloud().with_group("g", 0, 10, target=1, template=template("g", cpu=4000))
    h = Harness(cloud, AutoscalingOptions.from_flags({"cores-total": f"0:{cores_total}"}))
    h.add_node(node("g-1", "g", cpu=4000), "g")
    h.add_pod(pod("busy", 3500, node_name="g-1"))
    h.nodes["outside"] = _not_ready("outside", 8000)  # in no group
    h.add_pod(pod("p", 3000))
    h.run(0.0)
    assert bool(h.cloud.calls_to("increase_size")) is scaled


# -- --max-nodes-total --------------------------------------------------------------------------------


def _max_total_world(max_total: int, *, not_ready: int = 0, upcoming: int = 0) -> Harness:
    cloud = RecordingCloud().with_group("g", 0, 10, target=2 + not_ready + upcoming, template=template("g"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"max-nodes-total": max_total}))
    for i in range(2):
        h.add_node(node(f"g-{i}", "g"), "g")
        h.add_pod(pod(f"busy-{i}", 1800, node_name=f"g-{i}"))
    for i in range(not_ready):
        h.add_node(_not_ready(f"sick-{i}", 2000), "g")
    h.add_pod(pod("p", 1500))
    return h


@pytest.mark.parametrize(("max_total", "scaled"), [(2, False), (3, True)])
def test_max_nodes_total_counts_ready_nodes_only(max_total: int, scaled: bool) -> None:
    """static_autoscaler.go RunOnce: no scale-up iff ``len(readyNodes) >= a.MaxNodesTotal``; ScaleUp counts
    ``len(nodes)+len(upcomingNodes)`` with ``nodes`` the ready ones (issue 23 item 12): an Unready node
    does not block a scale-up (kubetide counted every node)."""
    h = _max_total_world(max_total, not_ready=1)
    h.run(0.0)
    assert bool(h.cloud.calls_to("increase_size")) is scaled


@pytest.mark.parametrize(
    ("version", "result", "events"),
    [
        ("1.31", "NoOptionsAvailable", []),
        ("1.36", "LimitedByMaxNodesTotal", ["MaxNodesTotalReached", "NotTriggerScaleUp"]),
    ],
)
def test_max_nodes_total_reached_by_the_ready_nodes(version: str, result: str, events: list[str]) -> None:
    """static_autoscaler.go RunOnce with ``len(readyNodes) >= MaxNodesTotal``: CA 1.31 sets
    ``ScaleUpNoOptionsAvailable`` and only logs; CA 1.33+ sets ``ScaleUpLimitedByMaxNodesTotal``, records
    the Warning MaxNodesTotalReached and puts every pod in PodsRemainUnschedulable (NotTriggerScaleUp
    "max total nodes in cluster reached", eventing_scale_up_processor.go)."""
    cloud = RecordingCloud().with_group("g", 0, 10, target=2, template=template("g"))
    flags = {"max-nodes-total": 2, "ca-compatibility-version": version}
    h = Harness(cloud, AutoscalingOptions.from_flags(flags))
    for i in range(2):
        h.add_node(node(f"g-{i}", "g"), "g")
        h.add_pod(pod(f"busy-{i}", 1800, node_name=f"g-{i}"))
    h.add_pod(pod("p", 1500))
    loop = h.run(0.0)
    assert loop.scale_up_result == result
    assert sorted({e.reason for e in loop.events} & {"MaxNodesTotalReached", "NotTriggerScaleUp"}) == events
    assert h.cloud.calls_to("increase_size") == []


def test_max_nodes_total_counts_upcoming_nodes() -> None:
    """orchestrator.go ScaleUp: ``GetCappedNewNodeCount(bestOption.NodeCount, len(nodes)+len(upcomingNodes))``
    and the estimator's ClusterCapacityThreshold on the same count: 2 ready + 1 upcoming with a max of 3
    leaves no room."""
    h = _max_total_world(3, upcoming=1)
    h.add_pod(pod("p2", 1500))  # one pod waits on the upcoming node, the other needs another node
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == []


@pytest.mark.parametrize(("current", "capped"), [(7, False), (8, True)])
def test_new_nodes_are_capped_above_the_max_total(current: int, capped: bool) -> None:
    """orchestrator.go GetCappedNewNodeCount: ``newNodeCount+currentNodeCount > MaxNodesTotal`` caps to
    ``MaxNodesTotal - currentNodeCount`` (max 10, 3 asked); 0 means no limit."""
    assert cap_by_max_nodes_total(3, current, 10) == ((2, True) if capped else (3, False))
    assert cap_by_max_nodes_total(3, 100, 0) == (3, False)


@pytest.mark.parametrize(("current", "limit"), [(9, 1), (10, -1), (11, -1)])
def test_estimation_stops_at_the_max_total(current: int, limit: int) -> None:
    """cluster_capacity_threshold.go NodeLimit: -1 iff ``ClusterMaxNodeLimit() <= CurrentNodeCount()``,
    else the difference."""
    assert ClusterCapacityThreshold(10, current).node_limit() == limit


# -- --max-nodes-per-scaleup --------------------------------------------------------------------------


def _pods(n: int) -> list[Pod]:
    owner = (OwnerRef("ReplicaSet", "rs", "uid-rs", True),)
    return [
        Pod(f"p{i}", owners=owner, containers=(Container("c", Resources({"cpu": 1000})),)) for i in range(n)
    ]


@pytest.mark.parametrize(("needed", "nodes", "limited"), [(2, 2, False), (3, 3, False), (4, 3, True)])
def test_estimate_adds_at_most_max_nodes_per_scaleup(needed: int, nodes: int, limited: bool) -> None:
    """threshold_based_limiter.go PermissionToAddNode: refused once ``nodes >= maxNodes``
    (static_threshold.go: --max-nodes-per-scaleup, 3 here; one pod per node)."""
    template = NodeView("t", allocatable=Resources({"cpu": 1000, "memory": 2**30, "pods": 110}))
    limiter = ThresholdLimiter([StaticThreshold(3, 0.0)])
    est = estimate(ClusterSnapshot(), template, _pods(needed), limiter)
    assert (est.node_count, est.limited) == (nodes, limited)


# -- --new-pod-scale-up-delay and young pods ----------------------------------------------------------


def _one_pending(**flags: object) -> Harness:
    cloud = RecordingCloud().with_group("g", 0, 10, template=template("g"))
    return Harness(cloud, AutoscalingOptions.from_flags(dict(flags)))


@pytest.mark.parametrize(("offset", "helped"), SIDES)
def test_new_pod_scale_up_delay_needs_the_pod_strictly_older(offset: float, helped: bool) -> None:
    """static_autoscaler.go filterOutYoungPods: kept iff ``podAge > podScaleUpDelay``."""
    h = _one_pending(**{"new-pod-scale-up-delay": 30.0})
    h.add_pod(pod("p", created=0.0))
    h.run(30.0 + offset)
    assert bool(h.cloud.calls_to("increase_size")) is helped


@pytest.mark.parametrize(
    ("annotation", "helped_at_45"), [("60s", False), ("40s", True), ("10s", True), ("x", True)]
)
def test_pod_scale_up_delay_annotation(annotation: str, helped_at_45: bool) -> None:
    """static_autoscaler.go filterOutYoungPods: the ``cluster-autoscaler.kubernetes.io/pod-scale-up-delay``
    annotation replaces the flag's delay (30s here) unless it is below it or does not parse."""
    h = _one_pending(**{"new-pod-scale-up-delay": 30.0})
    p = pod("p", created=0.0)
    p.annotations["cluster-autoscaler.kubernetes.io/pod-scale-up-delay"] = annotation
    h.add_pod(p)
    h.run(45.0)
    assert bool(h.cloud.calls_to("increase_size")) is helped_at_45


@pytest.mark.parametrize(("age", "new"), [(2.0 - TICK, True), (2.0, False), (2.0 + TICK, False)])
def test_all_pods_new_while_the_oldest_is_under_two_seconds(age: float, new: bool) -> None:
    """static_autoscaler.go allPodsAreNew: ``GetOldestCreateTime(pods).Add(unschedulablePodTimeBuffer).After(currentTime)``."""
    h = _one_pending()
    h.add_pod(pod("p", created=0.0))
    result = h.run(age)
    assert (result.scale_up_result == "InCooldown") is new


@pytest.mark.parametrize(("age", "new"), [(30.0 - TICK, True), (30.0, False)])
def test_pods_asking_for_gpus_wait_thirty_seconds(age: float, new: bool) -> None:
    """static_autoscaler.go allPodsAreNew: ``found && oldest.Add(unschedulablePodWithGpuTimeBuffer).After(currentTime)``
    for the pods requesting ``nvidia.com/gpu`` (utils/gpu PodRequestsGpu)."""
    cloud = RecordingCloud().with_group("g", 0, 10, template=template("g"))
    h = Harness(cloud)
    gpu = Pod(
        "gpu",
        owners=(OwnerRef("ReplicaSet", "rs", "uid-rs", True),),
        containers=(Container("c", Resources({"cpu": 100, "nvidia.com/gpu": 1})),),
        phase="Pending",
        creation_time=0.0,
        unschedulable_message="0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
    )
    h.add_pod(gpu)
    result = h.run(age)
    assert (result.scale_up_result == "InCooldown") is new


# -- --enforce-node-group-min-size ---------------------------------------------------------------------


@pytest.mark.parametrize(("max_total", "raised_by"), [(0, 3), (5, 3), (4, 2), (2, 0)])
def test_min_size_enforcement_is_capped_against_the_groups_target(max_total: int, raised_by: int) -> None:
    """orchestrator.go ScaleUpToNodeGroupMinSize: ``GetCappedNewNodeCount(newNodeCount, targetSize)``,
    i.e. ``newNodeCount + targetSize > MaxNodesTotal`` caps to ``MaxNodesTotal - targetSize`` (the group's
    own target, not the cluster's nodes), and below 1 nothing is done. Group: target 2, min 5."""
    cloud = RecordingCloud().with_group("g", 5, 10, target=2, template=template("g"))
    flags: dict[str, object] = {"enforce-node-group-min-size": True, "max-nodes-total": max_total}
    h = Harness(cloud, AutoscalingOptions.from_flags(flags))
    for i in range(2):
        h.add_node(node(f"g-{i}", "g"), "g")
        h.add_pod(pod(f"busy-{i}", 1800, node_name=f"g-{i}"))
    h.run(0.0)
    assert [c.args[0] for c in h.cloud.calls_to("increase_size")] == ([raised_by] if raised_by else [])
