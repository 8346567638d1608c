"""Housekeeping of one loop (CA spec §1 steps 1, 16, 18, 19 and 28): what CA cleans up or corrects
before and after it scales, decided from the cluster state and acted on at once.

* at start, stale ``ToBeDeletedByClusterAutoscaler`` taints go (kubetide keeps the ones still within
  the deletion window, so their drains resume) and unneeded timers come back from the soft taints;
* long-unregistered instances and instances that failed to be created are deleted in the cloud;
* group target sizes that nodes never filled are decreased (``fixNodeGroupSize``);
* with ``--enforce-node-group-min-size``, groups below their min size are raised.

Each is a small cloud or API write whose failure is reported and does not stop the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kubetide.cloud.instance import CloudProviderError, NotImplementedByProvider
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry, UpdateResult
from kubetide.cluster.goformat import go_duration
from kubetide.cluster.loop.context import LoopContext, Recorder
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import EventReason, KubetideEventReason
from kubetide.cluster.scaledown.taints import (
    DELETION_CANDIDATE_TAINT,
    TO_BE_DELETED_TAINT,
    is_being_deleted,
    to_be_deleted_time,
)
from kubetide.cluster.scaledown.unneeded import UnneededNode
from kubetide.model.api import ClusterPort
from kubetide.model.node import NodeView

__all__ = [
    "apply_cluster_state_update",
    "delete_created_with_errors",
    "enforce_min_sizes",
    "fix_node_group_sizes",
    "remove_old_unregistered",
    "restore_unneeded",
    "startup_cleanup",
]


def _without(node: NodeView, key: str) -> NodeView:
    return replace(node, taints=tuple(t for t in node.taints if t.key != key))


def apply_cluster_state_update(
    loop: LoopContext, update: UpdateResult, registry: ClusterStateRegistry, recorder: Recorder
) -> None:
    """The cluster state's own findings (§2.6, §2.7): its events, failed scale-ups (each backs its
    group off) and the reverts of timed-out scale-ups (``--revert-timed-out-scale-ups``, 1.36+, and
    ``--scale-up-progress-timeout``), executed through the cloud."""
    for ev in update.events:
        recorder.cluster_event(loop, ev)
    for failure in update.failed_scale_ups:
        loop.result.stats.failed_scale_ups += 1
        code = failure.error.error_code or "unknown"
        loop.failed_scale_ups[code] = loop.failed_scale_ups.get(code, 0) + 1
        recorder.backoff_event(loop, registry, failure.group)
    for revert in update.reverts:
        group = loop.groups.get(revert.group)
        if group is None or revert.delta >= 0:
            continue
        registry.forget_incorrect_size(revert.group)  # fixNodeGroupSize must not decrease it again
        try:
            group.decrease_target_size(revert.delta)
        except CloudProviderError as exc:
            recorder.emit(
                loop,
                CAEvent(
                    "Warning",
                    str(EventReason.FAILED_TO_REVERT_SCALE_UP),
                    f"NodeGroup/{revert.group}",
                    f"Failed to revert scale-up of group {revert.group}: {exc}",
                    {"group": revert.group},
                ),
            )
    if update.reverts:
        registry.recalculate()


def startup_cleanup(loop: LoopContext, port: ClusterPort, recorder: Recorder) -> None:
    """Upstream removes every ToBeDeleted taint at start; kubetide keeps the ones still within the
    deletion window (their drains are resumed) and removes only stale ones."""
    for i, node in enumerate(loop.nodes):
        since = to_be_deleted_time(node)
        if since is None or loop.group_of.get(node.name) is None or is_being_deleted(node, loop.now):
            continue
        data: dict[str, object] = {"node": node.name}
        name = node.name
        if not recorder.api_call(
            loop,
            EventReason.CLUSTER_AUTOSCALER_CLEANUP,
            f"Node/{name}",
            f"failed to remove stale {TO_BE_DELETED_TAINT} taint",
            data,
            port.remove_node_taint,
            name,
            TO_BE_DELETED_TAINT,
        ):
            continue
        loop.nodes[i] = _without(node, TO_BE_DELETED_TAINT)
        recorder.emit(
            loop,
            CAEvent(
                "Normal",
                str(EventReason.CLUSTER_AUTOSCALER_CLEANUP),
                f"Node/{name}",
                "removed stale ToBeDeletedByClusterAutoscaler taint",
                data,
            ),
        )


def restore_unneeded(
    loop: LoopContext, options: AutoscalingOptions, port: ClusterPort, recorder: Recorder
) -> dict[str, UnneededNode]:
    """At start: with ``--node-deletion-candidate-ttl`` > 0, unneeded timers come back from the soft
    taints (younger than the TTL); with ``--max-bulk-soft-taint-count=0``, stale soft taints go."""
    ttl = options.node_deletion_candidate_ttl
    unneeded: dict[str, UnneededNode] = {}
    for i, node in enumerate(loop.nodes):
        since = next((t.value for t in node.taints if t.key == DELETION_CANDIDATE_TAINT), None)
        if since is None:
            continue
        try:
            when = float(since)
        except ValueError:
            when = float("-inf")
        if ttl > 0 and loop.now - when < ttl:
            unneeded[node.name] = UnneededNode(node, when, False)
        elif options.max_bulk_soft_taint_count == 0:
            name = node.name
            if recorder.api_call(
                loop,
                EventReason.CLUSTER_AUTOSCALER_CLEANUP,
                f"Node/{name}",
                f"failed to remove {DELETION_CANDIDATE_TAINT} taint",
                {"node": name},
                port.remove_node_taint,
                name,
                DELETION_CANDIDATE_TAINT,
            ):
                loop.nodes[i] = _without(node, DELETION_CANDIDATE_TAINT)
    return unneeded


def _delete(group: NodeGroup, nodes: Sequence[NodeView], force: bool) -> None:
    if force:
        try:
            group.force_delete_nodes(nodes)
            return
        except NotImplementedByProvider:
            pass
    group.delete_nodes(nodes)


def remove_old_unregistered(
    loop: LoopContext, registry: ClusterStateRegistry, options: AutoscalingOptions, recorder: Recorder
) -> None:
    if loop.unidentified:
        # kubetide: a Ready Node that no instance can be matched to may be any unregistered instance
        # (it registered without providerID); deleting one could terminate a machine that runs pods.
        return
    force = options.force_delete_unregistered_nodes
    foreign_too = options.delete_unregistered_foreign_instances
    if not foreign_too:
        for u in registry.newly_kept_foreign(loop.now):
            recorder.emit(
                loop,
                CAEvent(
                    "Warning",
                    str(KubetideEventReason.UNREGISTERED_INSTANCE_KEPT),
                    f"NodeGroup/{u.group}",
                    f"instance {u.instance_id} of node group {u.group} has not registered as a node for "
                    f"{go_duration(loop.now - u.since)}, but kubetide did not launch it (it was there before "
                    "kubetide managed the "
                    "group, or appeared with no scale-up of kubetide in flight) and never saw it as a node: "
                    "it may be no Kubernetes machine, so it is kept; --delete-unregistered-foreign-instances "
                    "removes such instances as Cluster Autoscaler does",
                    {"group": u.group, "instance": u.instance_id},
                ),
            )
    for gid, nodes in sorted(registry.unregistered_to_delete(loop.now, force, foreign_too).items()):
        group = loop.groups.get(gid)
        if group is None:
            continue
        fakes = [NodeView(u.instance_id, provider_id=u.instance_id, ready=False) for u in nodes]
        try:
            _delete(group, fakes, force)
        except CloudProviderError as exc:
            for u in nodes:
                recorder.emit(
                    loop,
                    CAEvent(
                        "Warning",
                        str(EventReason.DELETE_UNREGISTERED_FAILED),
                        f"NodeGroup/{gid}",
                        f"Failed to remove node {u.instance_id}: {exc}",
                        {"group": gid, "instance": u.instance_id},
                    ),
                )
            return
        for u in nodes:
            loop.result.stats.unregistered_removed += 1
            recorder.emit(
                loop,
                CAEvent(
                    "Normal",
                    str(EventReason.DELETE_UNREGISTERED),
                    f"NodeGroup/{gid}",
                    f"Removed unregistered node {u.instance_id}",
                    {"group": gid, "instance": u.instance_id},
                ),
            )
        registry.recalculate()


def delete_created_with_errors(
    loop: LoopContext, registry: ClusterStateRegistry, options: AutoscalingOptions, recorder: Recorder
) -> None:
    deleted = False
    for gid, instances in sorted(registry.instances_with_creation_errors().items()):
        group = loop.groups.get(gid)
        if group is None:
            continue
        fakes = [NodeView(i.id, provider_id=i.id, ready=False) for i in instances]
        try:
            _delete(group, fakes, options.force_delete_failed_nodes)
        except CloudProviderError:
            continue
        deleted = True
        for inst in instances:
            loop.result.stats.failed_instances_removed += 1
            recorder.emit(
                loop,
                CAEvent(
                    "Normal",
                    str(KubetideEventReason.DELETE_CREATED_WITH_ERROR),
                    f"NodeGroup/{gid}",
                    f"Removed instance {inst.id} of group {gid} that failed to be created",
                    {"group": gid, "instance": inst.id},
                ),
            )
    if deleted:
        registry.recalculate()


def fix_node_group_sizes(loop: LoopContext, registry: ClusterStateRegistry, recorder: Recorder) -> bool:
    """True when a size was fixed: upstream then skips the rest of the loop."""
    fixed = False
    for gid, delta in sorted(registry.size_fixes(loop.now).items()):
        group = loop.groups.get(gid)
        if group is None:
            continue
        try:
            group.decrease_target_size(delta)
        except CloudProviderError:
            continue
        fixed = True
        recorder.emit(
            loop,
            CAEvent(
                "Warning",
                str(KubetideEventReason.FIX_NODE_GROUP_SIZE),
                f"NodeGroup/{gid}",
                f"Decreased the target size of group {gid} by {-delta}: its nodes did not come up",
                {"group": gid, "delta": delta},
            ),
        )
    if fixed:
        registry.recalculate()
    return fixed


def enforce_min_sizes(
    loop: LoopContext, registry: ClusterStateRegistry, options: AutoscalingOptions, recorder: Recorder
) -> bool:
    """``--enforce-node-group-min-size`` (``ScaleUpToNodeGroupMinSize``): raise groups below their min
    size (unhealthy and backed-off groups are skipped). ``--max-nodes-total`` caps each group as
    upstream's ``GetCappedNewNodeCount(newNodeCount, targetSize)`` does: against the group's own target.
    True when a group was raised (the loop's last scale-up time)."""
    raised = False
    for gid, group in sorted(loop.groups.items()):
        try:
            target = group.target_size()
        except CloudProviderError:
            continue
        if target >= group.min_size() or not registry.is_safe_to_scale_up(gid, loop.now):
            continue
        delta = group.min_size() - target
        if options.max_nodes_total > 0 and delta + target > options.max_nodes_total:
            delta = options.max_nodes_total - target
        if delta < 1:
            continue
        try:
            group.increase_size(delta)
        except CloudProviderError:
            break  # ExecuteScaleUps stops at the first failure
        raised = True
        registry.register_scale_up(gid, delta, loop.now)
        loop.result.stats.scale_ups += 1
        loop.result.stats.nodes_added += delta
        recorder.emit(
            loop,
            CAEvent(
                "Normal",
                str(EventReason.SCALED_UP_GROUP),
                f"NodeGroup/{gid}",
                f"Scale-up: group {gid} size set to {target + delta} instead of {target} "
                f"(max: {group.max_size()})",
                {"group": gid, "from": target, "to": target + delta},
            ),
        )
    if raised:
        registry.recalculate()
    return raised
