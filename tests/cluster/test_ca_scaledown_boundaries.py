"""Every time and threshold comparison of the scale-down decision, at the boundary (exactly equal, and a
tick either side), against CA 1.31's code (each test names the upstream file and function)."""

from __future__ import annotations

import math
from dataclasses import replace

from ca_builders import cnode
from ca_loop_harness import GIB, Harness, node, pod, template

from kubetide.cloud.instance import NodeGroupAutoscalingOptions
from kubetide.cluster.compat import Compatibility, compatibility
from kubetide.cluster.flags import parse_flags
from kubetide.cluster.loop.scaledown_stages import soft_taints
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.budgets import Budget, crop_nodes, group_nodes
from kubetide.cluster.scaledown.cooldown import ScaleDownTimes, scale_down_in_cooldown
from kubetide.cluster.scaledown.eligibility import EligibilityInput, filter_out_unremovable
from kubetide.cluster.scaledown.limits import limits_left, try_decrement
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT, TO_BE_DELETED_TAINT, is_being_deleted
from kubetide.cluster.scaledown.unneeded import GroupSizes, UnneededNode, removable_at
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import DrainContext, DrainOptions, drain_node
from kubetide.testing.cloud import RecordingCloud

NOW = 1_700_000_000.0
TICK = 0.001  # well above float resolution at NOW (2.4e-7 s)
DEFAULTS = AutoscalingOptions().node_group_defaults()
CA_1_31, CA_1_36 = compatibility("1.31"), compatibility("1.36")


def _pod(name: str, node_name: str, cpu: int, *, kind: str = "ReplicaSet", gpus: int = 0) -> Pod:
    requests = {"cpu": cpu, "memory": 0}
    if gpus:
        requests["nvidia.com/gpu"] = gpus
    return Pod(
        name,
        owners=(OwnerRef(kind, "o", f"uid-{kind}", True),),
        containers=(Container("c", Resources(requests)),),
        node_name=node_name,
    )


def _judge(
    n: NodeView,
    pods: list[Pod],
    *,
    opts: NodeGroupAutoscalingOptions = DEFAULTS,
    now: float = NOW,
    recently: dict[str, float] | None = None,
    unready_enabled: bool = True,
    gpu_label: str = "",
    compat: Compatibility = CA_1_31,
) -> str | None:
    """The node's unremovable reason in FilterOutUnremovable (None: a candidate)."""
    result = filter_out_unremovable(
        [n],
        EligibilityInput(
            pods_by_node={n.name: pods},
            group_of={n.name: "ng"},
            group_options=lambda group: opts,
            scale_down_unready_enabled=unready_enabled,
            gpu_label=gpu_label,
            recently_unremovable=recently or {},
            compat=compat,
        ),
        now,
    )
    return result.unremovable.get(n.name)


# -- eligibility (core/scaledown/eligibility/eligibility.go) ------------------------------------------


def test_utilization_equal_to_the_threshold_is_not_underutilized() -> None:
    """eligibility.go, isNodeBelowUtilizationThreshold: ``utilization >= threshold`` is NotUnderutilized.
    One 1000m pod on a 2-CPU node is 0.50: kept at the default 0.5 (issue 23, item 1)."""
    n = cnode("n", cpu=2000, mem=10 * GIB)
    assert _judge(n, [_pod("p", "n", 999)]) is None  # 0.4995
    assert _judge(n, [_pod("p", "n", 1000)]) == "NotUnderutilized"  # 0.5
    assert _judge(n, [_pod("p", "n", 1001)]) == "NotUnderutilized"  # 0.5005


def test_a_groups_own_threshold_is_compared_the_same_way() -> None:
    """eligibility.go, isNodeBelowUtilizationThreshold with GetScaleDownUtilizationThreshold(group)."""
    n = cnode("n", cpu=2000, mem=10 * GIB)
    opts = replace(DEFAULTS, scale_down_utilization_threshold=0.25)
    assert _judge(n, [_pod("p", "n", 499)], opts=opts) is None
    assert _judge(n, [_pod("p", "n", 500)], opts=opts) == "NotUnderutilized"
    # A threshold of 0 leaves nothing underutilized, an empty node included (0 >= 0).
    zero = replace(DEFAULTS, scale_down_utilization_threshold=0.0)
    assert _judge(n, [], opts=zero) == "NotUnderutilized"


def test_gpu_nodes_compare_gpu_utilization_with_the_gpu_threshold() -> None:
    """eligibility.go, isNodeBelowUtilizationThreshold: a node with a GPU config is compared with
    GetScaleDownGpuUtilizationThreshold, ``>=`` as well; utilization.Calculate counts GPUs alone (the
    busy CPU does not count) and an unready GPU (none allocatable) counts as 0."""
    alloc = Resources({"cpu": 4000, "memory": 4 * GIB, "pods": 110, "nvidia.com/gpu": 4})
    n = replace(cnode("g"), allocatable=alloc, capacity=alloc)
    opts = replace(DEFAULTS, scale_down_gpu_utilization_threshold=0.25, scale_down_utilization_threshold=0.9)
    busy_cpu = 3900
    assert _judge(n, [_pod("p", "g", busy_cpu, gpus=1)], opts=opts) == "NotUnderutilized"  # 0.25
    assert (
        _judge(
            n,
            [_pod("p", "g", busy_cpu, gpus=1)],
            opts=replace(opts, scale_down_gpu_utilization_threshold=0.2501),
        )
        is None
    )
    labelled = replace(cnode("u"), labels={"accel": "t"})
    assert _judge(labelled, [], opts=opts, gpu_label="accel") is None  # GPUs not ready: 0 < 0.25
    at_zero = replace(opts, scale_down_gpu_utilization_threshold=0.0)
    assert _judge(labelled, [], opts=at_zero, gpu_label="accel") == "NotUnderutilized"  # 0 >= 0


def test_nan_utilization_is_underutilized_as_go_compares_it() -> None:
    """utilization.Calculate divides by allocatable less ignored DaemonSet pods: 0/0 is NaN in Go, and
    ``NaN >= threshold`` is false (isNodeBelowUtilizationThreshold), so the node is a candidate."""
    n = cnode("n", cpu=1000, mem=1000)
    ds = Pod(
        "ds",
        owners=(OwnerRef("DaemonSet", "d", "uid-d", True),),
        containers=(Container("c", Resources({"cpu": 1000, "memory": 1000})),),
        node_name="n",
    )
    opts = replace(DEFAULTS, ignore_daemon_sets_utilization=True)
    result = filter_out_unremovable(
        [n],
        EligibilityInput(pods_by_node={"n": [ds]}, group_of={"n": "ng"}, group_options=lambda g: opts),
        NOW,
    )
    assert result.candidates == ("n",) and math.isnan(result.utilization["n"].utilization)


def test_utilization_that_cannot_be_computed_is_judged_as_zero() -> None:
    """CA 1.31 eligibility.go, unremovableReasonAndNodeUtilization: a failed utilization.Calculate is
    only logged and the zero Info judged (CA 1.32 made it UnexpectedError). The public case
    ca-eligibility-broken-utilization's input (a 0-CPU node with a 100m pod) under 1.31."""
    n = cnode("n", cpu=0, mem=0)
    assert _judge(n, [_pod("p", "n", 100)]) is None
    assert _judge(n, [], opts=replace(DEFAULTS, scale_down_utilization_threshold=0.0)) == "NotUnderutilized"


def test_with_ca_1_36_utilization_that_cannot_be_computed_is_an_unexpected_error() -> None:
    """CA 1.32+ eligibility.go, unremovableReasonAndNodeUtilization: ``if err != nil {...; return
    simulator.UnexpectedError, nil}`` after utilization.Calculate, whatever the threshold."""
    n = cnode("n", cpu=0, mem=0)
    assert _judge(n, [_pod("p", "n", 100)], compat=CA_1_36) == "UnexpectedError"
    assert _judge(n, [], compat=CA_1_36) == "UnexpectedError"
    assert _judge(cnode("ok", cpu=1000, mem=GIB), [], compat=CA_1_36) is None


def test_with_ca_1_36_utilization_at_the_threshold_is_underutilized() -> None:
    """CA 1.35+ eligibility.go, isNodeAtOrBelowUtilizationThreshold: ``utilization > threshold`` is
    NotUnderutilized, so exactly at the threshold passes; the GPU threshold the same way. With a zero
    threshold an empty node (or one with only ignored DaemonSet pods: ca-eligibility-only-ds-threshold-zero)
    is underutilized, where 1.31 keeps it."""
    n = cnode("n", cpu=2000, mem=10 * GIB)
    assert _judge(n, [_pod("p", "n", 1000)], compat=CA_1_36) is None  # 0.5 at 0.5
    assert _judge(n, [_pod("p", "n", 1001)], compat=CA_1_36) == "NotUnderutilized"
    zero = replace(DEFAULTS, scale_down_utilization_threshold=0.0, ignore_daemon_sets_utilization=True)
    ds = _pod("ds", "n", 500, kind="DaemonSet")
    assert _judge(n, [ds], opts=zero, compat=CA_1_36) is None
    assert _judge(n, [ds], opts=zero, compat=CA_1_31) == "NotUnderutilized"
    assert _judge(n, [_pod("p", "n", 1)], opts=zero, compat=CA_1_36) == "NotUnderutilized"
    labelled = replace(cnode("u"), labels={"accel": "t"})
    gpu_zero = replace(DEFAULTS, scale_down_gpu_utilization_threshold=0.0)
    assert _judge(labelled, [], opts=gpu_zero, gpu_label="accel", compat=CA_1_36) is None  # 0 <= 0


def test_unready_nodes_only_when_scale_down_of_unready_nodes_is_enabled() -> None:
    """eligibility.go: ``!ScaleDownUnreadyEnabled`` and not ready (GetReadinessState) is
    ScaleDownUnreadyDisabled; a ready node is not affected."""
    assert _judge(cnode("u", ready=False), [], unready_enabled=False) == "ScaleDownUnreadyDisabled"
    assert _judge(cnode("u", ready=False), [], unready_enabled=True) is None
    assert _judge(cnode("r"), [], unready_enabled=False) is None


def test_the_scale_down_disabled_annotation_must_be_exactly_true() -> None:
    """eligibility.go, HasNoScaleDownAnnotation: ``Annotations[key] == "true"``."""
    key = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
    assert _judge(cnode("n", annotations={key: "true"}), []) == "ScaleDownDisabledAnnotation"
    assert _judge(cnode("n", annotations={key: "True"}), []) is None
    assert _judge(cnode("n", annotations={key: "false"}), []) is None


def test_a_node_counts_as_being_deleted_for_less_than_five_minutes_after_its_taint() -> None:
    """actuation/delete_in_batch.go, IsNodeBeingDeleted: ``now - taintTime < 5m`` (or < 3m); the
    time is taints.GetToBeDeletedTime, ``strconv.ParseInt`` of the value (a value it cannot parse:
    not being deleted)."""

    def tainted(value: str) -> NodeView:
        return cnode("n", taints=(Taint(TO_BE_DELETED_TAINT, value, "NoSchedule"),))

    at = int(NOW) - 300
    assert is_being_deleted(tainted(str(at + 1)), NOW)
    assert not is_being_deleted(tainted(str(at)), NOW)
    assert not is_being_deleted(tainted(str(at - 1)), NOW)
    assert _judge(tainted(str(at + 1)), []) == "CurrentlyBeingDeleted"
    assert _judge(tainted(str(at)), []) is None
    assert not is_being_deleted(tainted(f"{at + 100}.5"), NOW)  # ParseInt refuses it
    assert not is_being_deleted(tainted("soon"), NOW)
    assert is_being_deleted(tainted(f"+{at + 1}"), NOW)


def test_recently_unremovable_until_its_recheck_time_strictly() -> None:
    """unremovable/nodes.go: Update keeps a TTL while ``ttl.After(now)``; IsRecent then skips the node
    (RecentlyUnremovable). At the TTL itself the node is checked again."""
    n = cnode("n")
    assert _judge(n, [], recently={"n": NOW + TICK}) == "RecentlyUnremovable"
    assert _judge(n, [], recently={"n": NOW}) is None
    assert _judge(n, [], recently={"n": NOW - TICK}) is None


# -- unneeded timers and RemovableAt (core/scaledown/unneeded/nodes.go) ----------------------------


def _removable(
    u: UnneededNode,
    now: float,
    opts: NodeGroupAutoscalingOptions = DEFAULTS,
    sizes: GroupSizes | None = None,
    compat: Compatibility = CA_1_31,
) -> str | None:
    result = removable_at(
        [u],
        now,
        lambda node: "ng",
        lambda g: opts,
        {"ng": sizes or GroupSizes(5, 0)},
        zero_time_immediate=compat.zero_removal_time_immediate,
    )
    return result.unremovable.get(u.node.name)


def test_unneeded_strictly_longer_than_the_unneeded_time() -> None:
    """nodes.go, unremovableReason: ``!since.Add(unneededTime).Before(now)`` is NotUnneededLongEnough."""
    since = NOW - 600
    u = UnneededNode(cnode("n"), since, True)
    assert _removable(u, NOW - TICK) == "NotUnneededLongEnough"
    assert _removable(u, NOW) == "NotUnneededLongEnough"
    assert _removable(u, NOW + TICK) is None


def test_a_zero_unneeded_time_still_waits_one_loop() -> None:
    """nodes.go, unremovableReason: with --scale-down-unneeded-time=0 a node first found unneeded now has
    ``since + 0 == now``, not before now: it is removable only in a later loop (issue 23, item 8)."""
    zero = replace(DEFAULTS, scale_down_unneeded_time=0.0, scale_down_unready_time=0.0)
    u = UnneededNode(cnode("n"), NOW, True)
    assert _removable(u, NOW, zero) == "NotUnneededLongEnough"
    assert _removable(u, NOW + TICK, zero) is None
    unready = UnneededNode(cnode("u", ready=False), NOW, True)
    assert _removable(unready, NOW, zero) == "NotUnreadyLongEnough"
    assert _removable(unready, NOW + TICK, zero) is None


def test_with_ca_1_36_a_zero_unneeded_time_is_met_at_once() -> None:
    """CA 1.35+ nodes.go, unremovableReason: ``v.removalThreshold > 0 && !since.Add(threshold).Before(ts)``:
    a zero unneeded (unready) time never holds a node; any other keeps its strict boundary."""
    zero = replace(DEFAULTS, scale_down_unneeded_time=0.0, scale_down_unready_time=0.0)
    assert _removable(UnneededNode(cnode("n"), NOW, True), NOW, zero, compat=CA_1_36) is None
    assert _removable(UnneededNode(cnode("u", ready=False), NOW, True), NOW, zero, compat=CA_1_36) is None
    u = UnneededNode(cnode("n"), NOW - 600, True)
    assert _removable(u, NOW, compat=CA_1_36) == "NotUnneededLongEnough"
    assert _removable(u, NOW + TICK, compat=CA_1_36) is None


def test_unready_nodes_wait_the_unready_time_strictly() -> None:
    """nodes.go, unremovableReason: an unready node (GetReadinessState) is held to
    GetScaleDownUnreadyTime with the same ``Before``; the unneeded time does not apply to it."""
    opts = replace(DEFAULTS, scale_down_unneeded_time=600.0, scale_down_unready_time=1200.0)
    u = UnneededNode(cnode("u", ready=False), NOW - 1200, True)
    assert _removable(u, NOW, opts) == "NotUnreadyLongEnough"
    assert _removable(u, NOW + TICK, opts) is None
    ready = UnneededNode(cnode("r"), NOW - 1200, True)
    assert _removable(ready, NOW, opts) is None


def test_min_size_counts_deletions_in_progress_and_nodes_accepted_before() -> None:
    """nodes.go, verifyMinSize: ``size - deletionsInProgress <= MinSize`` is NodeGroupMinSizeReached,
    size being the target less the nodes accepted so far in this pass."""
    long_ago = NOW - 10_000
    nodes = [UnneededNode(cnode(f"n{i}"), long_ago, True) for i in range(3)]
    result = removable_at(nodes, NOW, lambda n: "ng", lambda g: DEFAULTS, {"ng": GroupSizes(5, 2, 1)})
    assert result.empty == ("n0", "n1")  # 5-1=4 > 2, 4-1=3 > 2, then 3-1=2 <= 2
    assert result.unremovable == {"n2": "NodeGroupMinSizeReached"}
    exactly = removable_at(nodes[:1], NOW, lambda n: "ng", lambda g: DEFAULTS, {"ng": GroupSizes(3, 2, 1)})
    assert exactly.unremovable == {"n0": "NodeGroupMinSizeReached"}  # 3-1 == 2


def test_timers_are_checked_before_the_group_size_is_looked_up() -> None:
    """nodes.go, unremovableReason: the unneeded time is checked before verifyMinSize, which answers
    UnexpectedError for a group whose size could not be read."""
    u = UnneededNode(cnode("n"), NOW, True)
    no_size = removable_at([u], NOW, lambda n: "ng", lambda g: DEFAULTS, {})
    assert no_size.unremovable == {"n": "NotUnneededLongEnough"}
    old = UnneededNode(cnode("n"), NOW - 10_000, True)
    assert removable_at([old], NOW, lambda n: "ng", lambda g: DEFAULTS, {}).unremovable == {
        "n": "UnexpectedError"
    }


def test_min_resource_limits_leave_exactly_the_minimum() -> None:
    """resource/limits.go, LimitsLeft and TryDecrementBy: left = max(0, total - min) per resource with
    a minimum above 0; a node taking ``delta > left`` is MinimalResourceLimitExceeded, and only accepted
    nodes spend what is left; a resource the node does not have (delta 0) never blocks it."""
    left = limits_left({"cpu": 10, "memory": 100, "nvidia-t4": 0}, {"cpu": 6, "memory": 0, "nvidia-t4": 2})
    assert left == {"cpu": 4, "nvidia-t4": 0}
    assert try_decrement(left, {"cpu": 4, "memory": 50, "nodes": 1, "nvidia-t4": 0})  # delta == left
    assert left == {"cpu": 0, "nvidia-t4": 0}
    assert not try_decrement(left, {"cpu": 1, "nvidia-t4": 0})
    assert left == {"cpu": 0, "nvidia-t4": 0}
    again = limits_left({"cpu": 10}, {"cpu": 6})
    assert not try_decrement(again, {"cpu": 5}) and again == {"cpu": 4}


# -- cooldown (core/static_autoscaler.go, isScaleDownInCooldown) --------------------------------------


def test_each_delay_window_ends_exactly_at_its_end() -> None:
    """static_autoscaler.go, isScaleDownInCooldown: ``last.Add(delay).After(now)``: in cooldown strictly
    before ``last + delay``, not at it."""
    kw = {"delay_after_add": 600.0, "delay_after_failure": 180.0, "delay_after_delete": 60.0}
    long_ago = NOW - 10_000
    for field, delay in (
        ("last_scale_up", 600.0),
        ("last_scale_down_fail", 180.0),
        ("last_scale_down_delete", 60.0),
    ):
        times = replace(ScaleDownTimes(long_ago, long_ago, long_ago), **{field: NOW - delay})
        assert scale_down_in_cooldown(times, NOW - TICK, **kw), field
        assert not scale_down_in_cooldown(times, NOW, **kw), field
        assert not scale_down_in_cooldown(times, NOW + TICK, **kw), field
    # A zero delay never holds scale-down back, even in the very loop of the event.
    just_now = ScaleDownTimes(NOW, NOW, NOW)
    assert not scale_down_in_cooldown(
        just_now, NOW, delay_after_add=0.0, delay_after_failure=0.0, delay_after_delete=0.0
    )


# -- budgets (core/scaledown/budgets/budgets.go, CropNodes) -------------------------------------------


def _crop(empty: int, drain: int, budget: Budget) -> tuple[int, int]:
    e, d = crop_nodes(
        group_nodes([(f"e{i}", "a") for i in range(empty)]),
        group_nodes([(f"d{i}", "b") for i in range(drain)]),
        budget,
    )
    return sum(len(g.nodes) for g in e), sum(len(g.nodes) for g in d)


def test_parallelism_is_filled_exactly() -> None:
    """budgets.go, CropNodes and cropIndividualNodes: --max-scale-down-parallelism less all deletions in
    progress for empty nodes; the drain nodes take min(what is left, --max-drain-parallelism less drains
    in progress); a budget below 1 takes nothing."""
    assert _crop(10, 0, Budget(10, 1)) == (10, 0)
    assert _crop(11, 0, Budget(10, 1)) == (10, 0)
    assert _crop(9, 2, Budget(10, 1)) == (9, 1)
    assert _crop(10, 2, Budget(10, 5)) == (10, 0)
    assert _crop(0, 3, Budget(10, 3)) == (0, 3)
    assert _crop(0, 4, Budget(10, 3)) == (0, 3)
    assert _crop(0, 3, Budget(10, 3, drain_in_progress=1)) == (0, 2)
    assert _crop(0, 3, Budget(10, 1, drain_in_progress=1)) == (0, 0)
    assert _crop(3, 3, Budget(10, 3, empty_in_progress=6, drain_in_progress=1)) == (3, 0)
    assert _crop(3, 0, Budget(10, 3, empty_in_progress=10)) == (0, 0)


def test_atomic_groups_go_whole_or_not_at_all() -> None:
    """budgets.go, CropNodes: an atomic group's empty and drain nodes are taken together, only when
    they are its whole target size; the first one may go over the budget (not when the budget is 0)."""
    atomic = frozenset({"slice"})
    empty = group_nodes([("s0", "slice"), ("s1", "slice")], atomic)
    drain = group_nodes([("s2", "slice")], atomic)
    e, d = crop_nodes(empty, drain, Budget(2, 1), {"slice": 3})  # 3 > 2: the one overflow allowed
    assert [g.nodes for g in e] == [("s0", "s1")] and [g.nodes for g in d] == [("s2",)]
    assert e[0].batch_size == 3
    e, d = crop_nodes(empty, drain, Budget(3, 0), {"slice": 3})  # drain budget 0: no overflow
    assert (e, d) == ([], [])
    e, d = crop_nodes(empty, drain, Budget(10, 1), {"slice": 4})  # not the whole group
    assert (e, d) == ([], [])
    e, d = crop_nodes(empty, drain, Budget(0, 1), {"slice": 3})
    assert (e, d) == ([], [])


def test_max_empty_bulk_delete_given_alone_sets_the_parallelism() -> None:
    """main.go: ``--max-empty-bulk-delete`` passed without ``--max-scale-down-parallelism`` sets it; with
    both, the parallelism wins."""
    values, problems = parse_flags({"max-empty-bulk-delete": 3})
    assert problems == [] and values["max-scale-down-parallelism"] == 3
    assert AutoscalingOptions.from_flags({"max-empty-bulk-delete": 3}).max_scale_down_parallelism == 3
    both = {"max-empty-bulk-delete": 3, "max-scale-down-parallelism": 7}
    assert parse_flags(both)[0]["max-scale-down-parallelism"] == 7
    assert AutoscalingOptions.from_flags(both).max_scale_down_parallelism == 7


def test_scale_down_delay_type_local_takes_only_its_default() -> None:
    """processors/scaledowncandidates/scale_down_candidates_delay_processor.go is not modelled: the flag
    is refused rather than accepted and ignored (the global cooldown would be skipped)."""
    _, problems = parse_flags({"scale-down-delay-type-local": True})
    assert [name for name, _ in problems] == ["scale-down-delay-type-local"]
    assert parse_flags({"scale-down-delay-type-local": False})[1] == []


# -- the planner's loop (core/scaledown/planner/planner.go) -----------------------------------------


def _setup(flags: dict[str, object] | None = None, **group: int) -> Harness:
    sizes = {"min": 0, "max": 10, **group}
    cloud = RecordingCloud().with_group("ng", sizes["min"], sizes["max"], target=3, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags(dict(flags or {})))
    h.add_node(node("n0", "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n0", labels={"app": "big"}))
    for name in ("n1", "n2"):
        h.add_node(node(name, "ng"), "ng")
    return h


def test_the_unneeded_limit_stops_the_simulation_at_exactly_the_limit() -> None:
    """planner.go, categorizeNodes: the loop breaks once ``len(removable) - atomic >= unneededNodesLimit()``
    (N + 2N with no unneeded nodes yet; N = --max-scale-down-parallelism)."""
    h = _setup({"max-scale-down-parallelism": 1})
    for i in range(3, 6):
        h.add_node(node(f"n{i}", "ng"), "ng")
    h.cloud.groups["ng"].target = 6
    result = h.run(0.0)
    assert len(result.unneeded) == 2  # limit min(0 + 2, 1 * floor(600/600) + 1) = 2
    skipped = [n for n, why in result.not_candidates.items() if "not simulated" in why]
    assert len(skipped) == 3


def test_unremovable_nodes_are_rechecked_exactly_at_their_recheck_time() -> None:
    """planner.go, categorizeNodes: AddTimeout(latestUpdate + --unremovable-node-recheck-timeout);
    unremovable/nodes.go keeps it while ``ttl.After(now)``: at the TTL the node is simulated again."""
    h = _setup({"unremovable-node-recheck-timeout": 60.0})
    h.nodes.pop("n2")
    h.cloud.groups["ng"].instances.pop("n2")
    h.cloud.groups["ng"].target = 2
    h.add_pod(pod("bare", 500, node_name="n1", owner="Unknown"))  # NotReplicated: BlockedByPod
    assert h.run(0.0).unremovable["n1"] == "BlockedByPod"
    assert h.run(60.0 - TICK).unremovable["n1"] == "RecentlyUnremovable"
    assert h.run(60.0).unremovable["n1"] == "BlockedByPod"


def test_an_empty_node_with_a_zero_unneeded_time_is_deleted_one_loop_later() -> None:
    """nodes.go, unremovableReason (``since + 0`` is not before ``now`` in the loop that finds it):
    issue 23 item 8, kubetide deleted it in the first loop."""
    h = _setup({"scale-down-unneeded-time": 0.0, "scale-down-delay-after-add": 0.0})
    first = h.run(0.0)
    assert set(first.unneeded) == {"n1", "n2"}
    assert first.unremovable["n1"] == "NotUnneededLongEnough"
    assert h.cloud.calls_to("delete_nodes") == []
    h.run(10.0)
    assert sorted(c.args[0] for c in h.cloud.calls_to("delete_nodes")) == ["n1", "n2"]


def test_with_ca_1_36_an_empty_node_with_a_zero_unneeded_time_goes_in_the_loop_that_finds_it() -> None:
    """CA 1.35+ nodes.go (``removalThreshold > 0 &&``) under --ca-compatibility-version=1.36."""
    h = _setup(
        {
            "scale-down-unneeded-time": 0.0,
            "scale-down-delay-after-add": 0.0,
            "ca-compatibility-version": "1.36",
        }
    )
    first = h.run(0.0)
    assert "n1" not in first.unremovable
    assert sorted(c.args[0] for c in h.cloud.calls_to("delete_nodes")) == ["n1", "n2"]


def test_a_node_at_exactly_the_threshold_is_never_drained() -> None:
    """Issue 23 item 1 in the loop: one 1000m pod on a 2-CPU node (0.50) stays, CA 1.31's
    isNodeBelowUtilizationThreshold; at 999m it is drained after the unneeded time."""
    for cpu, drained in ((1000, False), (999, True)):
        h = _setup()
        h.nodes.pop("n2")
        h.cloud.groups["ng"].instances.pop("n2")
        h.cloud.groups["ng"].target = 2
        h.nodes["n0"] = node("n0", "ng", cpu=4000)  # 2100m busy (0.525): kept, with room for 1000m
        h.pods["big"] = pod("big", 2100, node_name="n0", labels={"app": "big"})
        h.add_pod(pod("half", cpu, node_name="n1"))
        h.run(0.0)
        h.run(601.0)
        assert (h.evicted == ["half"]) is drained, cpu


def test_soft_taints_spend_the_budget_on_removals_first() -> None:
    """actuation/softtaint.go, UpdateSoftDeletionTaints: needed nodes lose the DeletionCandidate taint
    first, then unneeded nodes get it, within --max-bulk-soft-taint-count API calls (exactly that many);
    a node with a ToBeDeleted taint is skipped whatever its value; a --max-bulk-soft-taint-time of 0
    (``elapsed >= budget`` at once) stops them all."""
    soft = Taint(DELETION_CANDIDATE_TAINT, "1", "PreferNoSchedule")
    needed = [cnode(f"needed{i}", taints=(soft,)) for i in range(2)]
    unneeded = [cnode(f"unneeded{i}") for i in range(2)]
    deleting = cnode("deleting", taints=(Taint(TO_BE_DELETED_TAINT, "garbage", "NoSchedule"),))
    nodes = [*unneeded, *needed, deleting]
    timers = {n.name: UnneededNode(n, NOW, True) for n in [*unneeded, deleting]}
    group_of: dict[str, str | None] = dict.fromkeys((n.name for n in nodes), "ng")

    def taints(count: int, time: float = 5.0) -> tuple[tuple[tuple[str, Taint], ...], tuple[str, ...]]:
        return soft_taints(nodes, timers, group_of, count, time)

    add, remove = taints(2)
    assert remove == ("needed0", "needed1") and add == ()
    add, remove = taints(3)
    assert len(remove) == 2 and [name for name, _ in add] == ["unneeded0"]
    add, _ = taints(4)
    assert [name for name, _ in add] == ["unneeded0", "unneeded1"]  # never "deleting"
    assert taints(4, 0.0) == ((), ())


def test_node_delete_delay_after_taint_ends_exactly_at_its_end() -> None:
    """actuation/actuator.go, deleteNodesAsync: ``time.Sleep(nodeDeleteDelayAfterTaint)`` after the
    taint, then the node is deleted: not before taint + delay, and at it."""
    h = _setup({"node-delete-delay-after-taint": 5.0})
    assert h.ca is not None
    h.ca.run_once(h.world(), 0.0)
    h.ca.run_once(h.world(), 610.0)  # n1 and n2 tainted at 610, not deleted yet
    assert h.cloud.calls_to("delete_nodes") == []
    h.ca.run_deletions(h.world(), 615.0 - TICK)
    assert h.cloud.calls_to("delete_nodes") == []
    h.ca.run_deletions(h.world(), 615.0)
    assert sorted(c.args[0] for c in h.cloud.calls_to("delete_nodes")) == ["n1", "n2"]


def test_candidates_pool_flags_change_nothing_in_the_planner() -> None:
    """--scale-down-candidates-pool-ratio/-min-count are read only by CA 1.31's legacy scale-down
    (legacy.go); the planner (--parallel-drain, the default) looks at every candidate."""
    plain, pooled = (
        _setup(),
        _setup({"scale-down-candidates-pool-ratio": 0.0, "scale-down-candidates-pool-min-count": 0}),
    )
    assert plain.run(0.0).unneeded.keys() == pooled.run(0.0).unneeded.keys() == {"n1", "n2"}


def test_an_empty_deletion_that_gains_a_pod_does_not_take_the_drain_budget() -> None:
    """budgets.go, CropNodes: drains in progress are the deletion tracker's (StartDeletionWithDrain),
    not the nodes that happen to have pods: an empty node tainted for deletion that a pod then lands
    on still counts as an empty deletion, so --max-drain-parallelism=1 lets a drain start."""
    h = _setup({"max-drain-parallelism": 1, "node-delete-delay-after-taint": 60.0})
    assert h.ca is not None
    h.add_pod(pod("busy-n2", 1200, node_name="n2"))  # 0.6: not underutilized yet
    h.ca.run_once(h.world(), 0.0)
    h.pods["busy-n2"] = pod("busy-n2", 300, node_name="n2")  # unneeded from t=10
    h.ca.run_once(h.world(), 10.0)
    h.ca.run_once(h.world(), 600.5)  # n1 (empty, unneeded since 0) is tainted; its deletion waits 60s
    assert any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n1"].taints)
    h.add_pod(pod("late", 100, node_name="n1"))
    h.ca.run_once(h.world(), 611.0)  # n2 removable (10 + 600 < 611): a drain, within the budget
    assert any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)


def test_only_groups_above_their_min_size_have_candidates() -> None:
    """processors/nodes/pre_filtering_processor.go, GetScaleDownCandidates: ``size <= minSize`` (the
    target size) leaves the group's nodes out; one node above it lets them in."""
    at_min = _setup(min=3)
    result = at_min.run(0.0)
    assert result.unneeded == {} and "minimum size" in result.not_candidates["n1"]
    above = _setup(min=2)
    assert set(above.run(0.0).unneeded) == {"n1", "n2"}


def test_kube_system_pods_without_a_pdb_always_block_by_default() -> None:
    """CA 1.31 simulator/drainability/rules/system/rule.go, Drainable: a kube-system pod no PDB covers
    blocks its node (UnmovableKubeSystemPod) however old; CA 1.33's timeout
    (isBspPassedDisruptionTimeout, ``now.After(creation + timeout)``) applies only when the flag is
    given, and then the pod is drainable at once (DrainOk)."""
    old_pod = _pod("coredns", "n", 100).evolve(namespace="kube-system", creation_time=NOW - 10 * 86400)
    assert AutoscalingOptions().blocking_system_pod_distruption_timeout == 0.0
    blocked = drain_node([old_pod], DrainContext(NOW, DrainOptions()))
    assert blocked.blocking is not None and blocked.blocking[1] == "UnmovableKubeSystemPod"
    hour = DrainOptions(blocking_system_pod_timeout_s=3600.0)
    at = old_pod.evolve(creation_time=NOW - 3600)
    assert drain_node([at], DrainContext(NOW, hour)).blocking is not None  # not after creation + 1h
    assert drain_node([at], DrainContext(NOW + TICK, hour)).pods_to_move == (at,)
    # DrainOk decides: the local-storage rule after it is not asked.
    local = at.evolve(volumes=({"name": "v", "hostPath": {"path": "/x"}},))
    assert drain_node([local], DrainContext(NOW + TICK, hour)).pods_to_move == (local,)


def test_with_ca_1_36_kube_system_pods_block_for_an_hour_by_default() -> None:
    """CA 1.33+ config/flags/flags.go: --blocking-system-pod-distruption-timeout defaults to time.Hour;
    the loop's drainability rules get it from --ca-compatibility-version=1.36 when the flag is not given."""
    assert (
        AutoscalingOptions(ca_compatibility_version="1.36").blocking_system_pod_distruption_timeout == 3600.0
    )
    for version, drained in (("1.31", False), ("1.36", True)):
        h = _setup({"ca-compatibility-version": version})
        h.add_pod(pod("coredns", 100, node_name="n1").evolve(namespace="kube-system", creation_time=-7200.0))
        h.run(0.0)
        h.run(601.0)
        assert ("coredns" in h.evicted) is drained, version


def test_an_atomic_group_scales_down_only_whole() -> None:
    """processors/nodes/scale_down_set_processor.go, AtomicResizeFilteringProcessor: a ZeroOrMax group's
    removable nodes go only when they are as many as its target size (one node kept by a busy pod keeps
    them all), then CropNodes takes them as one bucket."""
    atomic = replace(DEFAULTS, zero_or_max_node_scaling=True)
    for busy, deleted in ((True, []), (False, ["a0", "a1", "a2"])):
        cloud = (
            RecordingCloud()
            .with_group("slice", 0, 3, target=3, template=template("slice"), options=atomic)
            .with_group("ng", 1, 10, target=1, template=template("ng"))
        )
        h = Harness(cloud, AutoscalingOptions())
        h.add_node(node("keep", "ng", cpu=8000), "ng")
        h.add_pod(pod("anchor", 4100, node_name="keep", labels={"app": "anchor"}))
        for i in range(3):
            h.add_node(node(f"a{i}", "slice"), "slice")
        if busy:
            h.add_pod(pod("heavy", 1500, node_name="a1", labels={"app": "heavy"}))  # 0.75: not underutilized
        h.run(0.0)
        h.run(601.0)
        # actuation/group_deletion_scheduler.go addToBatcher: the group's nodes in one DeleteNodes call.
        assert [sorted(c.args) for c in h.cloud.calls_to("delete_nodes")] == ([deleted] if deleted else [])
