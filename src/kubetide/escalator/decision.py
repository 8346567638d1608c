"""One run of one Escalator node group, decided: upstream ``scaleNodeGroup`` without the API calls (spec §3).

The run buckets the group's nodes, measures requests against untainted capacity, and picks a delta:
fast or slow removal below the taint thresholds, ``calcScaleUpDelta`` above the scale-up threshold,
raised to 1 for a starved pod or an over-age node at the minimum, lowered to bring untainted nodes
back to ``max_nodes``, zeroed while the group is unhealthy. A scale-up never takes the untainted
nodes (with those on their way) past ``max_nodes`` (:mod:`kubetide.escalator.scale`), so a group above
its maximum with pending work settles instead of tainting and untainting the same nodes every run. The result is a frozen
:class:`EscalatorDecision`: which nodes to taint, untaint and delete, how many nodes to ask the cloud
for, and the group's next in-memory state; an adapter executes it. Like upstream, the returned
``delta`` is the *decided* one, not the number of nodes actually changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from kubetide.escalator.config import NodeGroupOptions, escalator_dry_mode
from kubetide.escalator.health import escalator_group_healthy, escalator_node_unhealthy
from kubetide.escalator.membership import group_nodes, group_pods, node_info_map
from kubetide.escalator.reap import escalator_force_reap, escalator_reap
from kubetide.escalator.reasons import Message, Reason
from kubetide.escalator.requests import (
    CpuMem,
    NodeCapacity,
    PodRequests,
    escalator_node_capacity,
    escalator_pod_requests,
)
from kubetide.escalator.scale import (
    AsgSnapshot,
    ScaleUpPlan,
    escalator_max_nodes_headroom,
    escalator_scale_down_count,
    escalator_scale_up_plan,
)
from kubetide.escalator.state import GroupMemory
from kubetide.escalator.taints import (
    NodeBuckets,
    created_at,
    escalator_bucket_nodes,
    has_taint,
    taint_oldest,
)
from kubetide.escalator.usage import EscalatorError, escalator_percent_usage, escalator_scale_up_delta
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["EscalatorDecision", "escalator_scale_node_group"]


@dataclass(frozen=True, slots=True)
class EscalatorDecision:
    """What one run decided for one group. Node names are in the order upstream acts on them."""

    group: str
    delta: int  # what scaleNodeGroup returns (the scale lock's requested nodes while it is held)
    error: str | None = None  # the returned error (the run stopped early); action errors are in notes
    reasons: tuple[Reason, ...] = ()
    notes: tuple[str, ...] = ()  # action errors, logged upstream and not returned
    taint: tuple[str, ...] = ()  # add the removal taint (value ``taint_value``, effect ``taint_effect``)
    untaint: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()  # cloud DeleteNodes then delete the Node objects
    increase: int = 0  # cloud IncreaseSize (0 in dry mode, where the lock is still taken)
    taint_value: str = ""
    taint_effect: str = "NoSchedule"
    dry_mode: bool = False
    memory: GroupMemory = field(
        default_factory=GroupMemory
    )  # the next state, assuming the cloud increase succeeds
    memory_if_increase_fails: GroupMemory | None = None  # None when there is no increase
    cpu_percent: float = 0.0
    mem_percent: float = 0.0
    requests: PodRequests = field(default_factory=PodRequests)
    capacity: NodeCapacity = field(default_factory=NodeCapacity)
    buckets: NodeBuckets = field(default_factory=NodeBuckets)
    healthy: bool = True


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _starved(group: NodeGroupOptions, requests: PodRequests, capacity: NodeCapacity, untainted: int) -> bool:
    cpu, mem = requests.largest_pending_cpu, requests.largest_pending_memory
    short = (not cpu.is_empty() and cpu.cpu_m > capacity.largest_available_cpu.cpu_m) or (
        not mem.is_empty() and mem.mem_bytes > capacity.largest_available_memory.mem_bytes
    )
    return group.scale_on_starve and short and untainted < group.max_nodes


def _over_age(group: NodeGroupOptions, buckets: NodeBuckets, now: float) -> bool:
    # Only at exactly min_nodes with nothing tainted: above the minimum, scale-down already removes
    # the oldest nodes first; with tainted nodes a rotation is already under way.
    age = group.max_node_age_s
    untainted = buckets.untainted
    if age <= 0 or len(untainted) != group.min_nodes or not untainted or buckets.tainted:
        return False
    return any(now - created_at(n) > age for n in untainted)


def escalator_scale_node_group(
    group: NodeGroupOptions,
    nodes: Iterable[NodeView],
    pods: Iterable[Pod],
    asg: AsgSnapshot,
    memory: GroupMemory,
    now: float,
    *,
    global_dry_mode: bool = False,
) -> EscalatorDecision:
    """Decide one run for ``group`` from all cluster ``nodes`` and non-terminal ``pods``."""
    opts = group.with_discovered_min_max(asg.min_size, asg.max_size)
    dry = escalator_dry_mode(global_dry_mode, opts)
    all_nodes = group_nodes(nodes, opts)
    gpods = group_pods(pods, opts)
    base = EscalatorDecision(
        group=opts.name,
        delta=0,
        taint_value=str(math.floor(now)),
        taint_effect=opts.effective_taint_effect,
        dry_mode=dry,
    )
    mem = memory
    if all_nodes:
        first = all_nodes[0].allocatable
        mem = replace(mem, cached_node=CpuMem(first["cpu"], first["memory"]))

    # Unhealthy nodes are tainted before bucketing. Outside dry mode the buckets still come from the
    # listed nodes, so a node tainted here counts as untainted until the next run, as upstream.
    taint: list[str] = []
    reasons: list[Reason] = []
    grace = opts.unhealthy_node_grace_s
    unhealthy = (
        {n.name for n in all_nodes if escalator_node_unhealthy(n, grace, now)}
        if opts.health_check_enabled
        else set()
    )
    if unhealthy:
        reasons.append(Reason.UNHEALTHY_TAINTED)
        if dry:
            mem = replace(mem, taint_tracker=_unique([*mem.taint_tracker, *sorted(unhealthy)]))
        else:
            taint += [n.name for n in all_nodes if n.name in unhealthy and not has_taint(n)]
    buckets = escalator_bucket_nodes(
        all_nodes, dry_mode=dry, taint_tracker=mem.taint_tracker, force_taint_tracker=mem.force_taint_tracker
    )
    base = replace(base, buckets=buckets)

    def done(delta: int, *, error: str | None = None, **changes: Any) -> EscalatorDecision:
        final = replace(mem, scale_delta=delta)
        return replace(
            base,
            delta=delta,
            error=error,
            reasons=tuple(reasons),
            taint=_unique(taint),
            memory=final,
            **changes,
        )

    if not all_nodes and not gpods:
        reasons.append(Reason.NO_PODS_NO_NODES)
        return done(0)
    if len(all_nodes) < opts.min_nodes:
        reasons.append(Reason.BELOW_MIN_NODE_COUNT)
        return done(0, error=Message.BELOW_MIN_NODE_COUNT)

    pods_by_node = node_info_map(gpods, all_nodes)
    requests = escalator_pod_requests(gpods)
    capacity = escalator_node_capacity(buckets.untainted, pods_by_node)
    base = replace(base, requests=requests, capacity=capacity)
    skip = unhealthy if opts.health_check_enabled else set()

    def scale_up(n: int) -> tuple[ScaleUpPlan, dict[str, Any]]:
        headroom = escalator_max_nodes_headroom(opts.max_nodes, len(buckets.untainted), len(all_nodes), asg)
        plan = escalator_scale_up_plan(n, buckets.tainted, asg, opts.max_nodes, skip, headroom)
        nonlocal mem
        if dry:
            mem = replace(mem, taint_tracker=tuple(t for t in mem.taint_tracker if t not in plan.untaint))
        changes: dict[str, Any] = {
            "untaint": () if dry else plan.untaint,
            "increase": 0 if dry else plan.add,
            "notes": _unique(m for m in (plan.note, plan.error) if m),
        }
        return plan, changes

    def with_lock(decision: EscalatorDecision, plan: ScaleUpPlan) -> EscalatorDecision:
        if plan.add <= 0:
            return decision
        locked = replace(decision.memory, lock=decision.memory.lock.locked(plan.add, now))
        return replace(decision, memory=locked, memory_if_increase_fails=decision.memory)

    if len(buckets.untainted) < opts.min_nodes:
        # Below the minimum: untaint or add straight away, skipping the scale lock and the rest.
        reasons.append(Reason.BELOW_MIN_UNTAINTED)
        plan, changes = scale_up(opts.min_nodes - len(buckets.untainted))
        return with_lock(done(plan.result, error=plan.error, **changes), plan)

    try:
        cpu_pct, mem_pct = escalator_percent_usage(requests.total, capacity.total, len(buckets.untainted))
    except EscalatorError as exc:
        reasons.append(Reason.PERCENT_ERROR)
        return done(0, error=str(exc))
    base = replace(base, cpu_percent=cpu_pct, mem_percent=mem_pct)

    if mem.lock.held(now, opts.scale_up_cool_down_s):
        # Nothing else happens while locked: no tainting, untainting or reaping.
        reasons.append(Reason.LOCKED)
        return done(mem.lock.requested_nodes)
    if mem.lock.is_locked:
        mem = replace(mem, lock=mem.lock.released())

    busiest = max(cpu_pct, mem_pct)
    delta = 0
    if busiest < opts.taint_lower_capacity_threshold_percent:
        reasons.append(Reason.FAST_REMOVAL)
        delta = -opts.fast_node_removal_rate
    elif busiest < opts.taint_upper_capacity_threshold_percent:
        reasons.append(Reason.SLOW_REMOVAL)
        delta = -opts.slow_node_removal_rate
    elif busiest > opts.scale_up_threshold_percent:
        reasons.append(Reason.SCALE_UP)
        try:
            delta = escalator_scale_up_delta(
                len(buckets.untainted), cpu_pct, mem_pct, requests.total, mem.cached_node,
                opts.scale_up_threshold_percent,
            )  # fmt: skip
        except EscalatorError as exc:
            reasons.append(Reason.SCALE_UP_ERROR)
            return done(0, error=str(exc))
    else:
        reasons.append(Reason.NO_CHANGE)

    if _starved(opts, requests, capacity, len(buckets.untainted)):
        reasons.append(Reason.STARVED)
        delta = max(delta, 1)
    if _over_age(opts, buckets, now):
        reasons.append(Reason.MAX_NODE_AGE)
        delta = max(delta, 1)
    if len(buckets.untainted) > opts.max_nodes:
        reasons.append(Reason.OVER_MAX)
        delta = min(delta, -(len(buckets.untainted) - opts.max_nodes))

    # Force-tainted nodes go as soon as they are empty, whatever the delta (never in dry mode).
    delete = [] if dry else [n.name for n in escalator_force_reap(buckets.force_tainted, pods_by_node)]

    healthy = True
    if opts.health_check_enabled and not escalator_group_healthy(
        all_nodes, grace, opts.health_check_newest_nodes_percent, opts.max_unhealthy_nodes_percent, now
    ):
        healthy = False
        reasons.append(Reason.UNHEALTHY)
        delta = 0
    base = replace(base, healthy=healthy)

    if delta > 0:
        plan, changes = scale_up(delta)
        mem = replace(mem, last_scale_out=now)
        changes["delete"] = _unique(delete)
        return with_lock(done(delta, **changes), plan)

    reaped = escalator_reap(buckets.tainted, pods_by_node, opts, now, healthy_allowed=healthy or delta < 0)
    if not dry:
        delete += [n.name for n in reaped]
    notes: tuple[str, ...] = ()
    if delta < 0:
        try:
            count = escalator_scale_down_count(-delta, len(buckets.untainted), opts.min_nodes, asg)
        except EscalatorError as exc:
            notes = (str(exc),)
        else:
            chosen = [buckets.untainted[i].name for i in taint_oldest(buckets.untainted, count)]
            if dry:
                mem = replace(mem, taint_tracker=_unique([*mem.taint_tracker, *chosen]))
            else:
                taint += chosen
    return done(delta, delete=_unique(delete), notes=notes)
