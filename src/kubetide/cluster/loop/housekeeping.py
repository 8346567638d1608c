"""Housekeeping of one loop (CA spec §1 steps 1, 16, 18, 19 and 28): what CA cleans up or corrects
before and after it scales, decided from the loop's view and the cluster state.

* at start, stale ``ToBeDeletedByClusterAutoscaler`` taints go (kubetide keeps the ones still within
  the deletion window, so their drains resume) and unneeded timers come back from the soft taints;
* long-unregistered instances and instances that failed to be created are deleted in the cloud;
* group target sizes that nodes never filled are decreased (``fixNodeGroupSize``);
* with ``--enforce-node-group-min-size``, groups below their min size are raised.

Each function returns a phase of the plan (:mod:`kubetide.cluster.loop.plan`); the actuator
(:mod:`kubetide.cluster.loop.housekeeping_actuator`) makes the writes, each of which may fail alone.
"""

from __future__ import annotations

from kubetide.cloud.instance import CloudProviderError
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry, UpdateResult
from kubetide.cluster.goformat import go_duration
from kubetide.cluster.loop.events import backoff_event, cluster_event
from kubetide.cluster.loop.plan import (
    ClusterStateFindings,
    FailedInstanceRemovals,
    InstanceRemoval,
    MinSizeRaise,
    MinSizeRaises,
    SizeChange,
    SizeFixes,
    TaintRemoval,
    TaintRemovals,
    UnregisteredRemovals,
)
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import KubetideEventReason
from kubetide.cluster.scaledown.taints import (
    DELETION_CANDIDATE_TAINT,
    TO_BE_DELETED_TAINT,
    is_being_deleted,
    to_be_deleted_time,
)
from kubetide.cluster.scaledown.unneeded import UnneededNode

__all__ = [
    "cluster_state_findings",
    "failed_instance_removals",
    "min_size_raises",
    "size_fixes",
    "soft_taint_cleanup",
    "stale_taint_removals",
    "unregistered_removals",
]


def stale_taint_removals(view: LoopView) -> TaintRemovals:
    """Upstream removes every ToBeDeleted taint at start; kubetide keeps the ones still within the
    deletion window (their drains are resumed) and removes only stale ones."""
    removals = tuple(
        TaintRemoval(
            node.name,
            TO_BE_DELETED_TAINT,
            f"failed to remove stale {TO_BE_DELETED_TAINT} taint",
            announce=True,
        )
        for node in view.nodes
        if to_be_deleted_time(node) is not None
        and view.group_of.get(node.name) is not None
        and not is_being_deleted(node, view.now)
    )
    return TaintRemovals("stale ToBeDeleted taints", removals)


def soft_taint_cleanup(view: LoopView, options: AutoscalingOptions) -> TaintRemovals:
    """At start: with ``--node-deletion-candidate-ttl`` > 0, unneeded timers come back from the soft
    taints (younger than the TTL); with ``--max-bulk-soft-taint-count=0``, stale soft taints go."""
    ttl = options.node_deletion_candidate_ttl
    restored: dict[str, UnneededNode] = {}
    removals = []
    for node in view.nodes:
        since = next((t.value for t in node.taints if t.key == DELETION_CANDIDATE_TAINT), None)
        if since is None:
            continue
        try:
            when = float(since)
        except ValueError:
            when = float("-inf")
        if ttl > 0 and view.now - when < ttl:
            restored[node.name] = UnneededNode(node, when, False)
        elif options.max_bulk_soft_taint_count == 0:
            failure = f"failed to remove {DELETION_CANDIDATE_TAINT} taint"
            removals.append(TaintRemoval(node.name, DELETION_CANDIDATE_TAINT, failure, announce=False))
    return TaintRemovals("stale soft taints", tuple(removals), restored)


def cluster_state_findings(
    view: LoopView, update: UpdateResult, registry: ClusterStateRegistry, namespace: str
) -> ClusterStateFindings:
    """The cluster state's own findings (§2.6, §2.7): its events, failed scale-ups (each backs its
    group off) and the reverts of timed-out scale-ups (``--revert-timed-out-scale-ups``, 1.36+, and
    ``--scale-up-progress-timeout``)."""
    events = [cluster_event(ev, view.groups, namespace) for ev in update.events]
    failed = []
    backoffs = 0
    for failure in update.failed_scale_ups:
        failed.append((failure.group, failure.error.error_code or "unknown"))
        event = backoff_event(registry, failure.group, view.now)
        if event is not None:
            backoffs += 1
            events.append(event)
    reverts = tuple(
        SizeChange(r.group, r.delta) for r in update.reverts if r.group in view.groups and r.delta < 0
    )
    return ClusterStateFindings(tuple(events), tuple(failed), backoffs, reverts, bool(update.reverts))


def unregistered_removals(
    view: LoopView, registry: ClusterStateRegistry, options: AutoscalingOptions
) -> UnregisteredRemovals:
    if view.unidentified:
        # kubetide: a Ready Node that no instance can be matched to may be any unregistered instance
        # (it registered without providerID); deleting one could terminate a machine that runs pods.
        return UnregisteredRemovals()
    force = options.force_delete_unregistered_nodes
    foreign_too = options.delete_unregistered_foreign_instances
    kept: list[CAEvent] = []
    if not foreign_too:
        for u in registry.newly_kept_foreign(view.now):
            kept.append(
                CAEvent(
                    "Warning",
                    str(KubetideEventReason.UNREGISTERED_INSTANCE_KEPT),
                    f"NodeGroup/{u.group}",
                    f"instance {u.instance_id} of node group {u.group} has not registered as a node for "
                    f"{go_duration(view.now - u.since)}, but kubetide did not launch it (it was there before "
                    "kubetide managed the "
                    "group, or appeared with no scale-up of kubetide in flight) and never saw it as a node: "
                    "it may be no Kubernetes machine, so it is kept; --delete-unregistered-foreign-instances "
                    "removes such instances as Cluster Autoscaler does",
                    {"group": u.group, "instance": u.instance_id},
                )
            )
    removals = tuple(
        InstanceRemoval(gid, tuple(u.instance_id for u in nodes), force)
        for gid, nodes in sorted(registry.unregistered_to_delete(view.now, force, foreign_too).items())
        if gid in view.groups
    )
    return UnregisteredRemovals(tuple(kept), removals)


def failed_instance_removals(
    view: LoopView, registry: ClusterStateRegistry, options: AutoscalingOptions
) -> FailedInstanceRemovals:
    removals = tuple(
        InstanceRemoval(gid, tuple(i.id for i in instances), options.force_delete_failed_nodes)
        for gid, instances in sorted(registry.instances_with_creation_errors().items())
        if gid in view.groups
    )
    return FailedInstanceRemovals(removals)


def size_fixes(view: LoopView, registry: ClusterStateRegistry) -> SizeFixes:
    fixes = tuple(
        SizeChange(gid, delta)
        for gid, delta in sorted(registry.size_fixes(view.now).items())
        if gid in view.groups
    )
    return SizeFixes(fixes)


def min_size_raises(
    view: LoopView, registry: ClusterStateRegistry, options: AutoscalingOptions
) -> MinSizeRaises:
    """``--enforce-node-group-min-size`` (``ScaleUpToNodeGroupMinSize``): raise groups below their min
    size (unhealthy and backed-off groups are skipped). ``--max-nodes-total`` caps each group as
    upstream's ``GetCappedNewNodeCount(newNodeCount, targetSize)`` does: against the group's own target."""
    raises = []
    for gid, group in sorted(view.groups.items()):
        try:
            target = group.target_size()
        except CloudProviderError:
            continue
        if target >= group.min_size() or not registry.is_safe_to_scale_up(gid, view.now):
            continue
        delta = group.min_size() - target
        if options.max_nodes_total > 0 and delta + target > options.max_nodes_total:
            delta = options.max_nodes_total - target
        if delta < 1:
            continue
        raises.append(MinSizeRaise(gid, target, delta, group.max_size()))
    return MinSizeRaises(tuple(raises))
