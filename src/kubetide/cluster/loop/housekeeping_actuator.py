"""Carries out the housekeeping phases of a plan (:mod:`kubetide.cluster.loop.housekeeping` decides
them): taints removed through the cluster port, instances deleted and targets changed through the
cloud, each failure reported and, but where upstream stops at the first, the others made. The cluster
state refreshes its targets after the changes (``Recalculate``) and is told of each scale-up.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.cloud.instance import CloudProviderError, NotImplementedByProvider
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.loop.execution import Execution
from kubetide.cluster.loop.plan import (
    ClusterStateFindings,
    FailedInstanceRemovals,
    MinSizeRaises,
    PartialDeliveryRemovals,
    SizeFixes,
    TaintRemovals,
    UnregisteredRemovals,
)
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason, KubetideEventReason
from kubetide.model.node import NodeView

__all__ = [
    "execute_cluster_state_findings",
    "execute_failed_instance_removals",
    "execute_min_size_raises",
    "execute_partial_delivery_removals",
    "execute_size_fixes",
    "execute_taint_removals",
    "execute_unregistered_removals",
]


def execute_taint_removals(run: Execution, phase: TaintRemovals) -> None:
    for removal in phase.removals:
        name = removal.node
        data: dict[str, object] = {"node": name}
        if not run.api_call(
            EventReason.CLUSTER_AUTOSCALER_CLEANUP,
            f"Node/{name}",
            removal.failure,
            data,
            run.port.remove_node_taint,
            name,
            removal.key,
        ):
            continue
        run.outcome.untainted[name] = removal.key
        if removal.announce:
            run.emit(
                CAEvent(
                    "Normal",
                    str(EventReason.CLUSTER_AUTOSCALER_CLEANUP),
                    f"Node/{name}",
                    "removed stale ToBeDeletedByClusterAutoscaler taint",
                    data,
                )
            )


def execute_cluster_state_findings(run: Execution, phase: ClusterStateFindings) -> None:
    """The findings' events and counts (they happened in the cloud), then the reverts."""
    for event in phase.events:
        run.emit(event)
    for _, code in phase.failed_scale_ups:
        run.outcome.stats.failed_scale_ups += 1
        run.outcome.count(run.outcome.failed_scale_ups, code)
    run.outcome.stats.backoffs += phase.backoffs
    for revert in phase.reverts:
        try:
            run.groups[revert.group].decrease_target_size(revert.delta)
        except CloudProviderError as exc:
            run.outcome.fail("decrease_target_size", f"NodeGroup/{revert.group}", exc)
            run.emit(
                CAEvent(
                    "Warning",
                    str(EventReason.FAILED_TO_REVERT_SCALE_UP),
                    f"NodeGroup/{revert.group}",
                    f"Failed to revert scale-up of group {revert.group}: {exc}",
                    {"group": revert.group},
                )
            )
    if phase.recalculate:
        run.registry.recalculate()


def _fakes(instances: Sequence[str]) -> list[NodeView]:
    """The nodes CA passes for instances that have none: the instance id as the providerID."""
    return [NodeView(i, provider_id=i, ready=False) for i in instances]


def _delete(group: NodeGroup, nodes: Sequence[NodeView], force: bool) -> None:
    if force:
        try:
            group.force_delete_nodes(nodes)
            return
        except NotImplementedByProvider:
            pass
    group.delete_nodes(nodes)


def execute_unregistered_removals(run: Execution, phase: UnregisteredRemovals) -> None:
    for event in phase.kept:
        run.emit(event)
    for removal in phase.removals:
        gid = removal.group
        try:
            _delete(run.groups[gid], _fakes(removal.instances), removal.force)
        except CloudProviderError as exc:
            run.outcome.fail("delete_nodes", f"NodeGroup/{gid}", exc)
            for instance in removal.instances:
                run.emit(
                    CAEvent(
                        "Warning",
                        str(EventReason.DELETE_UNREGISTERED_FAILED),
                        f"NodeGroup/{gid}",
                        f"Failed to remove node {instance}: {exc}",
                        {"group": gid, "instance": instance},
                    )
                )
            return
        for instance in removal.instances:
            run.outcome.stats.unregistered_removed += 1
            run.emit(
                CAEvent(
                    "Normal",
                    str(EventReason.DELETE_UNREGISTERED),
                    f"NodeGroup/{gid}",
                    f"Removed unregistered node {instance}",
                    {"group": gid, "instance": instance},
                )
            )
        run.registry.recalculate()


def execute_failed_instance_removals(run: Execution, phase: FailedInstanceRemovals) -> None:
    deleted = False
    for removal in phase.removals:
        gid = removal.group
        try:
            _delete(run.groups[gid], _fakes(removal.instances), removal.force)
        except CloudProviderError as exc:
            run.outcome.fail("delete_nodes", f"NodeGroup/{gid}", exc)
            continue
        deleted = True
        for instance in removal.instances:
            run.outcome.stats.failed_instances_removed += 1
            run.emit(
                CAEvent(
                    "Normal",
                    str(KubetideEventReason.DELETE_CREATED_WITH_ERROR),
                    f"NodeGroup/{gid}",
                    f"Removed instance {instance} of group {gid} that failed to be created",
                    {"group": gid, "instance": instance},
                )
            )
    if deleted:
        run.registry.recalculate()


def execute_size_fixes(run: Execution, phase: SizeFixes) -> None:
    fixed = False
    for fix in phase.fixes:
        gid, delta = fix.group, fix.delta
        try:
            run.groups[gid].decrease_target_size(delta)
        except CloudProviderError as exc:
            run.outcome.fail("decrease_target_size", f"NodeGroup/{gid}", exc)
            continue
        fixed = True
        run.outcome.size_fixed.append(gid)
        run.emit(
            CAEvent(
                "Warning",
                str(KubetideEventReason.FIX_NODE_GROUP_SIZE),
                f"NodeGroup/{gid}",
                f"Decreased the target size of group {gid} by {-delta}: its nodes did not come up",
                {"group": gid, "delta": delta},
            )
        )
    if fixed:
        run.registry.recalculate()


def execute_min_size_raises(run: Execution, phase: MinSizeRaises) -> None:
    raised = False
    for r in phase.raises:
        try:
            run.groups[r.group].increase_size(r.delta)
        except CloudProviderError as exc:
            run.outcome.fail("increase_size", f"NodeGroup/{r.group}", exc)
            break  # ExecuteScaleUps stops at the first failure
        raised = True
        run.outcome.raised_to_min.append(r.group)
        run.registry.register_scale_up(r.group, r.delta, run.now)
        run.outcome.stats.scale_ups += 1
        run.outcome.stats.nodes_added += r.delta
        run.emit(
            CAEvent(
                "Normal",
                str(EventReason.SCALED_UP_GROUP),
                f"NodeGroup/{r.group}",
                f"Scale-up: group {r.group} size set to {r.target + r.delta} instead of {r.target} "
                f"(max: {r.max_size})",
                {"group": r.group, "from": r.target, "to": r.target + r.delta},
            )
        )
    if raised:
        run.registry.recalculate()


def execute_partial_delivery_removals(run: Execution, phase: PartialDeliveryRemovals) -> None:
    deleted = False
    for removal in phase.removals:
        gid = removal.group
        try:
            run.groups[gid].delete_nodes(removal.nodes)
        except CloudProviderError as exc:
            run.outcome.fail("delete_nodes", f"NodeGroup/{gid}", exc)
            continue
        deleted = True
        for node in removal.nodes:
            run.registry.register_scale_down(gid, node.name, run.now)
            run.emit(
                CAEvent(
                    "Normal",
                    str(KubetideEventReason.DELETE_PARTIALLY_PROVISIONED),
                    f"NodeGroup/{gid}",
                    f"Removed empty node {node.name} of group {gid}: it came for ProvisioningRequest "
                    f"{removal.request}, whose other nodes did not (all-or-nothing)",
                    {"group": gid, "node": node.name, "provisioningRequest": removal.request},
                )
            )
    if deleted:
        run.registry.recalculate()
