"""Whether a Cluster Autoscaler loop was quiet, and until when another loop on the same world would be:
what lets a caller skip loops that provably change nothing (the simulator's day of a steady cluster).

A loop is *quiet* when it did nothing and said nothing (no event, no counter, no action, no error, no
deletion in progress, no pod pending) and the autoscaler's memory holds none of the time-based state
this module does not model: no scale-up or scale-down request in flight, no backoff, no unregistered,
unready or starting node, no incorrect size, no capacity API. :func:`quiet_memory` says so and returns
what of the memory still moves from loop to loop (the unneeded nodes and their times, the nodes
recently found unremovable, the last candidates); :func:`quiet_deadline` the earliest time at which a
time-based rule the loop reads could answer otherwise (an unneeded node reaching
``--scale-down-unneeded-time``, a recheck time ending, a scale-down cooldown ending, a template's cache
time ending, a node old enough to make a template).

A caller may skip a loop at ``now`` when the world and the cloud are unchanged since the last loop
run, that loop and the one before it ran on the same world and left the same :func:`quiet_memory`
(the memory is a fixed point of the loop on this world), and ``now`` is before the deadline: the loop
is then a function of the same world, memory and time rules, and gives the same answer. When unsure,
these return None: the loop runs.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.templates import TEMPLATE_STABILIZATION_S
from kubetide.cluster.loop.world import LoopStats
from kubetide.cluster.reasons import ScaleDownResult, ScaleUpResult
from kubetide.model.node import NodeView

__all__ = ["quiet_deadline", "quiet_memory"]

_QUIET_SCALE_UP = frozenset({str(ScaleUpResult.NOT_NEEDED)})
_QUIET_SCALE_DOWN = frozenset({str(ScaleDownResult.NO_NODE_DELETED), str(ScaleDownResult.NO_UNNEEDED)})


def quiet_memory(autoscaler: StaticAutoscaler, result: LoopResult) -> Hashable | None:
    """What of ``autoscaler``'s memory moves from one quiet loop to the next, after the loop that
    returned ``result``; None when that loop was not quiet (see the module's docstring)."""
    if not _quiet_result(result) or not _quiet_state(autoscaler):
        return None
    planner = autoscaler.planner
    unneeded = tuple(
        sorted((name, u.node, u.since, u.empty, u.risky) for name, u in planner.unneeded.items())
    )
    return (
        unneeded,
        tuple(sorted(planner.recently_unremovable.items())),
        frozenset(planner.previous_candidates),
        autoscaler.times,
    )


def _quiet_result(result: LoopResult) -> bool:
    plan = result.plan
    return (
        result.error is None
        and not result.events
        and result.stats == LoopStats()
        and result.scale_up_result in _QUIET_SCALE_UP
        and result.scale_down_result in _QUIET_SCALE_DOWN
        and result.deletions_due_at is None
        and not result.deletions_started
        and not result.nodes_deleted
        and not result.failures
        and not result.write_problems
        and not result.capacity_writes
        and result.capacity is None
        and result.status is not None
        and plan is not None
        and plan.stopped is None
        and result.metrics is not None
        and result.metrics.unschedulable_pods == 0
    )


def _quiet_state(autoscaler: StaticAutoscaler) -> bool:
    registry = autoscaler.registry
    readiness = registry.total_readiness
    return (
        not autoscaler.first_loop
        and autoscaler.capacity is None
        and not autoscaler.options.scale_down_delay_type_local  # per-group cooldowns: not modelled
        and not autoscaler._tainted_at
        and not autoscaler._deleted
        and not autoscaler.actuator.drains
        and not registry.scale_up_requests
        and not registry.scale_down_requests
        and not registry.unregistered
        and not registry.incorrect_sizes
        and not registry.backoff._entries
        and registry.is_cluster_healthy()
        and not (
            readiness.unready
            or readiness.not_started
            or readiness.deleted
            or readiness.suspended
            or readiness.unregistered
            or readiness.long_unregistered
            or readiness.resource_unready
        )
    )


def quiet_deadline(autoscaler: StaticAutoscaler, nodes: Sequence[NodeView], now: float) -> float:
    """The earliest time after ``now`` at which a time-based rule a quiet loop reads could answer
    otherwise, on the world whose nodes are ``nodes`` (``inf``: none)."""
    o = autoscaler.options
    planner = autoscaler.planner
    deadline = math.inf
    if planner.unneeded:
        status = autoscaler.status.last
        groups = [g.name for g in status.node_groups] if status is not None else []
        waits = [o.scale_down_unneeded_time, o.scale_down_unready_time]
        for gid in groups:
            group = autoscaler.registry.group_options(gid)
            waits += [group.scale_down_unneeded_time, group.scale_down_unready_time]
        # ``zero_removal_time_immediate`` compat: a zero time takes effect at once, so no deadline
        # after ``now`` would hold; the loop runs.
        shortest = min(waits)
        if shortest <= 0:
            return now
        deadline = min(u.since for u in planner.unneeded.values()) + shortest
    deadline = min(deadline, *planner.recently_unremovable.values(), math.inf)
    times = autoscaler.times
    for end in (
        times.last_scale_up + o.scale_down_delay_after_add,
        times.last_scale_down_delete + o.scale_down_delay_after_delete,
        times.last_scale_down_fail + o.scale_down_delay_after_failure,
    ):
        if end >= now:
            deadline = min(deadline, end)
    templates = autoscaler.templates
    for _, at in templates.cache.values():
        deadline = min(deadline, at + templates.cache_ttl)
    for node in nodes:
        created = node.creation_time
        if created is not None and created + TEMPLATE_STABILIZATION_S >= now:
            deadline = min(deadline, created + TEMPLATE_STABILIZATION_S)
    return deadline
