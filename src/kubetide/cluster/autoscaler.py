"""The Cluster Autoscaler's main loop: ``StaticAutoscaler.RunOnce`` (CA spec §1), as a functional core.

``StaticAutoscaler(cloud, port, options).run_once(world, now)`` reads the world (a :class:`World`:
nodes, pods, PDBs, ConfigMaps) and the cloud through the cloud-provider port, and acts through the
cloud (``IncreaseSize``, ``DeleteNodes``, ``DecreaseTargetSize``) and the :class:`ClusterPort` (node
taints, evictions). It reads no clock and does no I/O; the events and counters of the loop are
returned in a :class:`LoopResult`.

The order is upstream's: refresh the cloud, build the snapshot, templates, cluster state, remove
unregistered instances, health check, delete failed creations, fix group sizes, filter pods that fit
on existing or upcoming nodes, scale up, scale down.

Where kubetide deliberately differs, it is to fix what users hit (``notes/ecosystem.md``):

* **restart safety.** Everything a restarted CA must not forget is read back from the cluster: a node
  being deleted keeps its ``ToBeDeletedByClusterAutoscaler`` taint and the new CA resumes its drain
  (upstream strips those taints at start), and scale-ups in flight are re-adopted from the cloud (a
  target above the nodes that exist becomes an open scale-up request at the first loop), so the new CA
  does not add the same nodes a second time;
* **fast failover.** Instance creation errors (stockouts) back the group off at once (§2.7) and its
  phantom upcoming nodes stop counting (1.36+), so the next loop picks another group;
* **template drift.** A group's claimed template is compared with its real nodes and every difference
  is reported once (``NodeTemplateMismatch``); real nodes win, and are cached for scale-from-zero.

Simplifications: drains are not delayed by ``--node-delete-delay-after-taint`` (evictions start in the
loop that taints the node); GPU utilization, startup / status taints, the status ConfigMap, the
pods of nodes being drained in scale-up, and salvo / graceful-degradation modes are not implemented.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from kubetide.cloud.instance import (
    CloudProviderError,
    ErrorClass,
    InstanceErrorInfo,
    InstanceState,
    NodeTemplate,
    NotImplementedByProvider,
)
from kubetide.cloud.provider import CloudProvider, NodeGroup, PricingModel
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.clusterstate.registry import ClusterEvent, ClusterStateRegistry
from kubetide.cluster.expander import ChainStrategy, ExpanderDependencies, ExpansionContext, build_strategy
from kubetide.cluster.expander.priority import CONFIG_MAP_NAME
from kubetide.cluster.loop.scaledown import (
    Deletion,
    add_to_be_deleted,
    continue_deletions,
    remove_taint,
)
from kubetide.cluster.loop.templates import TemplateProvider
from kubetide.cluster.loop.world import CAEvent, ClusterPort, LoopResult, LoopStats, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import EventReason, ScaleDownResult, ScaleUpResult, SkipReason
from kubetide.cluster.scaledown.budgets import Budget, crop_nodes, group_nodes
from kubetide.cluster.scaledown.cooldown import ScaleDownTimes, scale_down_in_cooldown
from kubetide.cluster.scaledown.eligibility import EligibilityInput, filter_out_unremovable
from kubetide.cluster.scaledown.taints import (
    DELETION_CANDIDATE_TAINT,
    TO_BE_DELETED_TAINT,
    is_being_deleted,
    to_be_deleted_time,
)
from kubetide.cluster.scaledown.unneeded import GroupSizes, UnneededNode, removable_at, update_unneeded
from kubetide.cluster.scaleup.limits import ResourceLimits, node_resources
from kubetide.cluster.scaleup.orchestrator import GroupState, ScaleUpSettings, plan_scale_up
from kubetide.cluster.scaleup.similar import BASIC_IGNORED_LABELS, SimilarityRules
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import PODS, Resources
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import DrainContext, DrainOptions, drain_node
from kubetide.scheduling.equivalence import group_pods
from kubetide.scheduling.fit import FitChecker
from kubetide.scheduling.reasons import not_trigger_scale_up_message
from kubetide.scheduling.scaledown import must_move, simulate_removals
from kubetide.scheduling.scheduler import Scheduler
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["CAEvent", "ClusterPort", "LoopResult", "LoopStats", "StaticAutoscaler", "World"]

UNSCHEDULABLE_POD_TIME_BUFFER_S = 2.0
EVENT_DEDUP_WINDOW_S = 300.0
UPCOMING_ANNOTATION = "cluster-autoscaler.k8s.io/upcoming-node"
CA_EVENT_OBJECT = "ConfigMap/kube-system/cluster-autoscaler-status"
DEDUPLICATED_REASONS = frozenset(
    {
        EventReason.NOT_TRIGGER_SCALE_UP,
        EventReason.MAX_NODES_TOTAL_REACHED,
        EventReason.CLUSTER_UNHEALTHY,
        EventReason.PRIORITY_CONFIG_MAP_INVALID,
        EventReason.PRIORITY_CONFIG_MAP_NOT_MATCHED_GROUP,
        EventReason.PRIORITY_CONFIG_MAP_NO_GROUP_MATCHED,
        "NodeTemplateMismatch",
    }
)


def _estimation_node(template: NodeTemplate, name: str) -> NodeView:
    used = Resources({PODS: len(template.pods)})
    for p in template.pods:
        used = used + p.requests
    node = template.node
    return replace(
        node,
        name=name,
        labels=dict(node.labels),
        annotations={**node.annotations, UPCOMING_ANNOTATION: "true"},
        allocatable=node.allocatable - used,
    )


@dataclass
class _Loop:
    """Per-loop facts shared by the steps."""

    now: float
    world: World
    result: LoopResult
    nodes: list[NodeView]
    group_of: dict[str, str | None]
    groups: dict[str, NodeGroup]
    pods_by_node: dict[str, list[Pod]]


class StaticAutoscaler:
    def __init__(
        self,
        cloud: CloudProvider,
        port: ClusterPort,
        options: AutoscalingOptions | None = None,
        *,
        start_time: float = 0.0,
        seed: int = 0,
    ) -> None:
        self.cloud = cloud
        self.port = port
        self.options = options or AutoscalingOptions()
        self.registry = ClusterStateRegistry(cloud, self.options)
        self.templates = TemplateProvider(
            scale_from_unschedulable=self.options.scale_from_unschedulable,
            cache_ttl=self.options.node_info_cache_expire_time,
        )
        self.times = ScaleDownTimes.at_start(start_time)
        self.unneeded: dict[str, UnneededNode] = {}
        self.recently_unremovable: dict[str, float] = {}
        self.first_loop = True
        self.limits = ResourceLimits.from_options(self.options)
        self._world: World | None = None
        self._seed = seed
        self._scheduler = Scheduler(seed)
        self._recent_events: dict[tuple[str, str, str], float] = {}
        self.strategy = self._build_strategy()
        o = self.options
        self.settings = ScaleUpSettings(
            max_nodes_total=o.max_nodes_total,
            max_nodes_per_scaleup=o.max_nodes_per_scaleup,
            balance_similar_node_groups=o.balance_similar_node_groups,
            similarity=SimilarityRules(
                memory_difference_ratio=o.memory_difference_ratio,
                max_allocatable_difference_ratio=o.max_allocatable_difference_ratio,
                max_free_difference_ratio=o.max_free_difference_ratio,
                ignored_labels=BASIC_IGNORED_LABELS | frozenset(o.balancing_ignore_label),
                balancing_labels=tuple(o.balancing_label),
            ),
            limits=self.limits,
        )
        self.drain_options = DrainOptions(
            skip_nodes_with_system_pods=o.skip_nodes_with_system_pods,
            skip_nodes_with_local_storage=o.skip_nodes_with_local_storage,
            skip_nodes_with_custom_controller_pods=o.skip_nodes_with_custom_controller_pods,
            min_replica_count=o.min_replica_count,
            blocking_system_pod_timeout_s=o.blocking_system_pod_distruption_timeout,
        )

    # -- construction helpers ------------------------------------------------------------------------
    def _build_strategy(self) -> ChainStrategy:
        pricing: PricingModel | None = None
        if "price" in self.options.expanders:
            try:
                pricing = self.cloud.pricing()
            except NotImplementedByProvider:
                pricing = None
        namespace = self.options.namespace

        def priority_config_map() -> Mapping[str, str] | None:
            if self._world is None:
                return None
            return self._world.config_maps.get(f"{namespace}/{CONFIG_MAP_NAME}")

        return build_strategy(
            self.options.expanders,
            ExpanderDependencies(pricing=pricing, priority_config_map=priority_config_map),
        )

    # -- events ----------------------------------------------------------------------------------------
    def _emit(self, loop: _Loop, event: CAEvent) -> None:
        # Status events repeat every loop while nothing changes; upstream's recorder drops repeats within
        # 5 minutes. Events that report an action are all kept, so the log accounts for every action.
        if not self.options.record_duplicated_events and event.reason in DEDUPLICATED_REASONS:
            key = (event.reason, event.object, event.message)
            last = self._recent_events.get(key)
            if last is not None and loop.now - last < EVENT_DEDUP_WINDOW_S:
                return
            self._recent_events[key] = loop.now
        loop.result.events.append(event)

    def _emit_cluster_event(self, loop: _Loop, ev: ClusterEvent) -> None:
        obj = f"NodeGroup/{ev.object}" if ev.object in loop.groups else CA_EVENT_OBJECT
        if ev.object == CONFIG_MAP_NAME:
            obj = f"ConfigMap/{self.options.namespace}/{CONFIG_MAP_NAME}"
        data: dict[str, object] = {"group": ev.object} if ev.object in loop.groups else {}
        self._emit(loop, CAEvent(ev.type, str(ev.reason), obj, ev.message, data))

    def _backoff_event(self, loop: _Loop, gid: str) -> None:
        entry = self.registry.backoff.entry(gid)
        if entry is None:
            return
        loop.result.stats.backoffs += 1
        reason = entry.error_info.key if entry.error_info is not None else "unknown"
        self._emit(
            loop,
            CAEvent(
                "Warning",
                "NodeGroupBackoff",
                f"NodeGroup/{gid}",
                f"node group {gid} backed off until {entry.until:g}s after failed scale-up ({reason})",
                {"group": gid, "until": entry.until},
            ),
        )

    # -- the loop ------------------------------------------------------------------------------------
    def run_once(self, world: World, now: float) -> LoopResult:
        result = LoopResult()
        self._world = world
        try:
            self.cloud.refresh()
            groups = {g.id(): g for g in self.cloud.node_groups()}
        except CloudProviderError as exc:
            result.error = f"failed to refresh cloud provider: {exc}"
            return result
        group_of: dict[str, str | None] = {}
        for n in world.nodes:
            try:
                g = self.cloud.node_group_for_node(n)
            except CloudProviderError:
                g = None
            group_of[n.name] = g.id() if g is not None else None
        pods_by_node: dict[str, list[Pod]] = {n.name: [] for n in world.nodes}
        for p in world.pods:
            if p.node_name and p.node_name in pods_by_node and p.phase not in ("Succeeded", "Failed"):
                pods_by_node[p.node_name].append(p)
        loop = _Loop(now, world, result, list(world.nodes), group_of, groups, pods_by_node)
        if not self.options.scale_up_from_zero and not any(is_node_ready(n) for n in loop.nodes):
            result.error = "no ready nodes: the loop is skipped (--scale-up-from-zero=false)"
            return result
        if self.first_loop:
            self._startup_cleanup(loop)
            self._restore_unneeded(loop)
        templates, mismatches = self.templates.compute(
            list(groups.values()), loop.nodes, lambda n: group_of.get(n.name), pods_by_node, now
        )
        for m in mismatches:
            self._emit(
                loop,
                CAEvent(
                    "Warning",
                    "NodeTemplateMismatch",
                    f"NodeGroup/{m.group}",
                    f"node group {m.group}: the provider's template says {m.resource}={m.template}, "
                    f"its nodes have {m.observed}; using the real nodes",
                    {
                        "group": m.group,
                        "resource": m.resource,
                        "template": m.template,
                        "observed": m.observed,
                    },
                ),
            )
        try:
            update = self.registry.update_nodes(loop.nodes, now)
        except CloudProviderError as exc:
            self.unneeded = {}
            result.error = f"failed to update cluster state: {exc}"
            return result
        if self.first_loop:
            self.registry.adopt_in_flight_scale_ups(now)
            self.first_loop = False
        for ev in update.events:
            self._emit_cluster_event(loop, ev)
        for failure in update.failed_scale_ups:
            result.stats.failed_scale_ups += 1
            self._backoff_event(loop, failure.group)
        for revert in update.reverts:
            group = groups.get(revert.group)
            if group is None or revert.delta >= 0:
                continue
            try:
                group.decrease_target_size(revert.delta)
            except CloudProviderError as exc:
                self._emit(
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
            self.registry.recalculate()

        self._remove_old_unregistered(loop)
        if not self.registry.is_cluster_healthy():
            self.unneeded = {}
            self._emit(
                loop,
                CAEvent(
                    "Warning", str(EventReason.CLUSTER_UNHEALTHY), CA_EVENT_OBJECT, "Cluster is unhealthy"
                ),
            )
            result.scale_up_result = "ClusterUnhealthy"
            return result
        self._delete_created_with_errors(loop)
        if self._fix_node_group_sizes(loop):
            return result

        deletions = self._deletions_in_progress(loop)
        drain_ctx = DrainContext(now, self.drain_options, tuple(world.pdbs), None)
        if deletions:
            continue_deletions(
                deletions,
                pods_by_node,
                self.port,
                drain_ctx,
                now,
                max_pod_eviction_time=self.options.max_pod_eviction_time,
                is_deleting_in_cloud=self._deleting_in_cloud,
                register_scale_down=lambda gid, node: self.registry.register_scale_down(gid, node, now),
                events=self._sink(loop),
                stats=result.stats,
            )

        # -- snapshot with upcoming nodes, pending pods filtered onto free space ----------------------
        counts, registered_upcoming = self.registry.upcoming_nodes(now)
        upcoming_names = {n for names in registered_upcoming.values() for n in names}
        all_nodes = [n for n in loop.nodes if n.name not in upcoming_names]
        scheduled = [
            p
            for n in all_nodes
            for p in pods_by_node[n.name]
            if not (p.priority < self.options.expendable_pods_priority_cutoff)
        ]
        snapshot = ClusterSnapshot(all_nodes, scheduled)
        placeholders: list[NodeView] = []
        for gid, count in sorted(counts.items()):
            template = templates.get(gid)
            if template is None:
                continue
            for i in range(count):
                view = _estimation_node(template, f"{template.node.name}-upcoming-{i}")
                snapshot.add_node(view)
                placeholders.append(view)
        pending = [
            p
            for p in world.pods
            if not p.node_name
            and p.unschedulable_message is not None
            and p.deletion_time is None
            and p.phase not in ("Succeeded", "Failed")
            and not (p.priority < self.options.expendable_pods_priority_cutoff)
        ]
        to_help = self._filter_out_schedulable(snapshot, pending)
        to_help = [
            p
            for p in to_help
            if p.creation_time is None or now - p.creation_time > self.options.new_pod_scale_up_delay
        ]

        # -- scale-up --------------------------------------------------------------------------------
        scale_down_disabled = False
        if not to_help:
            result.scale_up_result = str(ScaleUpResult.NOT_NEEDED)
        elif (
            self.options.max_nodes_total > 0
            and sum(1 for n in loop.nodes if is_node_ready(n) and not n.unschedulable)
            >= self.options.max_nodes_total
        ):
            result.scale_up_result = str(ScaleUpResult.LIMITED_BY_MAX_NODES_TOTAL)
            msg = f"Max total nodes in cluster reached: {self.options.max_nodes_total}"
            self._emit(
                loop, CAEvent("Warning", str(EventReason.MAX_NODES_TOTAL_REACHED), CA_EVENT_OBJECT, msg)
            )
            for p in to_help:
                self._emit(
                    loop,
                    CAEvent(
                        "Normal",
                        str(EventReason.NOT_TRIGGER_SCALE_UP),
                        f"Pod/{p.namespace}/{p.name}",
                        "max total nodes in cluster reached",
                        {"reasons": {"max total nodes in cluster reached": 1}},
                    ),
                )
        elif self._all_pods_new(to_help, now):
            result.scale_up_result = str(ScaleUpResult.IN_COOLDOWN)
            scale_down_disabled = True
        else:
            self._scale_up(loop, to_help, templates, [*all_nodes, *placeholders])

        # -- scale-down ------------------------------------------------------------------------------
        if self.options.scale_down_enabled:
            self._scale_down(loop, snapshot, all_nodes, drain_ctx, scale_down_disabled, deletions)
        if self.options.enforce_node_group_min_size:
            self._enforce_min_sizes(loop)
        return result

    def _enforce_min_sizes(self, loop: _Loop) -> None:
        """``--enforce-node-group-min-size``: raise groups below their min size (unhealthy and backed-off
        groups are skipped; ``--max-nodes-total`` caps the total)."""
        room = self.options.max_nodes_total - len(loop.nodes) if self.options.max_nodes_total > 0 else None
        for gid, group in sorted(loop.groups.items()):
            if not self.registry.is_safe_to_scale_up(gid, loop.now):
                continue
            try:
                target = group.target_size()
            except CloudProviderError:
                continue
            delta = group.min_size() - target
            if room is not None:
                delta = min(delta, room)
            if delta <= 0:
                continue
            try:
                group.increase_size(delta)
            except CloudProviderError:
                continue
            if room is not None:
                room -= delta
            self.registry.register_scale_up(gid, delta, loop.now)
            loop.result.stats.scale_ups += 1
            loop.result.stats.nodes_added += delta
            self._emit(
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

    @staticmethod
    def _sink(loop: _Loop) -> list[CAEvent]:
        return loop.result.events

    # -- startup -------------------------------------------------------------------------------------
    def _startup_cleanup(self, loop: _Loop) -> None:
        """Upstream removes every ToBeDeleted taint at start; kubetide keeps the ones still within the
        deletion window (their drains are resumed) and removes only stale ones."""
        for i, node in enumerate(loop.nodes):
            since = to_be_deleted_time(node)
            if since is None or loop.group_of.get(node.name) is None:
                continue
            if not is_being_deleted(node, loop.now):
                taints = remove_taint(node, TO_BE_DELETED_TAINT)
                self.port.set_node_taints(node.name, taints)
                loop.nodes[i] = replace(node, taints=taints)
                self._emit(
                    loop,
                    CAEvent(
                        "Normal",
                        str(EventReason.CLUSTER_AUTOSCALER_CLEANUP),
                        f"Node/{node.name}",
                        "removed stale ToBeDeletedByClusterAutoscaler taint",
                        {"node": node.name},
                    ),
                )

    # -- cluster-state driven cleanups --------------------------------------------------------------
    def _remove_old_unregistered(self, loop: _Loop) -> None:
        chosen = self.registry.unregistered_to_delete(loop.now, self.options.force_delete_unregistered_nodes)
        for gid, nodes in sorted(chosen.items()):
            group = loop.groups.get(gid)
            if group is None:
                continue
            fakes = [NodeView(u.instance_id, provider_id=u.instance_id, ready=False) for u in nodes]
            try:
                self._delete(group, fakes, self.options.force_delete_unregistered_nodes)
            except CloudProviderError as exc:
                for u in nodes:
                    self._emit(
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
                self._emit(
                    loop,
                    CAEvent(
                        "Normal",
                        str(EventReason.DELETE_UNREGISTERED),
                        f"NodeGroup/{gid}",
                        f"Removed unregistered node {u.instance_id}",
                        {"group": gid, "instance": u.instance_id},
                    ),
                )
            self.registry.recalculate()

    @staticmethod
    def _delete(group: NodeGroup, nodes: Sequence[NodeView], force: bool) -> None:
        if force:
            try:
                group.force_delete_nodes(nodes)
                return
            except NotImplementedByProvider:
                pass
        group.delete_nodes(nodes)

    def _delete_created_with_errors(self, loop: _Loop) -> None:
        deleted = False
        for gid, instances in sorted(self.registry.instances_with_creation_errors().items()):
            group = loop.groups.get(gid)
            if group is None:
                continue
            fakes = [NodeView(i.id, provider_id=i.id, ready=False) for i in instances]
            try:
                self._delete(group, fakes, self.options.force_delete_failed_nodes)
            except CloudProviderError:
                continue
            deleted = True
            for inst in instances:
                loop.result.stats.failed_removed += 1
                self._emit(
                    loop,
                    CAEvent(
                        "Normal",
                        "DeleteCreatedWithError",
                        f"NodeGroup/{gid}",
                        f"Removed instance {inst.id} of group {gid} that failed to be created",
                        {"group": gid, "instance": inst.id},
                    ),
                )
        if deleted:
            self.registry.recalculate()

    def _fix_node_group_sizes(self, loop: _Loop) -> bool:
        fixed = False
        for gid, delta in sorted(self.registry.size_fixes(loop.now).items()):
            group = loop.groups.get(gid)
            if group is None:
                continue
            try:
                group.decrease_target_size(delta)
            except CloudProviderError:
                continue
            fixed = True
            self._emit(
                loop,
                CAEvent(
                    "Warning",
                    "FixNodeGroupSize",
                    f"NodeGroup/{gid}",
                    f"Decreased the target size of group {gid} by {-delta}: its nodes did not come up",
                    {"group": gid, "delta": delta},
                ),
            )
        if fixed:
            self.registry.recalculate()
        return fixed

    # -- deletions in progress (derived from taints) ------------------------------------------------
    def _deletions_in_progress(self, loop: _Loop) -> list[Deletion]:
        out = []
        for node in loop.nodes:
            since = to_be_deleted_time(node)
            gid = loop.group_of.get(node.name)
            if since is None or gid is None or not is_being_deleted(node, loop.now):
                continue
            out.append(Deletion(node, loop.groups[gid], since))
        return out

    def _deleting_in_cloud(self, node: NodeView) -> bool:
        return self.registry.instance_state(node.provider_id) is InstanceState.Deleting

    # -- scale-up --------------------------------------------------------------------------------------
    def _filter_out_schedulable(self, snapshot: ClusterSnapshot, pending: list[Pod]) -> list[Pod]:
        if not pending or snapshot.num_active() == 0:
            return pending
        res = self._scheduler.schedule(snapshot, pending)
        placed = {id(p.pod) for p in res.placements}
        return [p for p in pending if id(p) not in placed]

    @staticmethod
    def _all_pods_new(pods: Sequence[Pod], now: float) -> bool:
        oldest = min((p.creation_time for p in pods if p.creation_time is not None), default=None)
        return oldest is not None and now - oldest < UNSCHEDULABLE_POD_TIME_BUFFER_S

    def _group_states(self, loop: _Loop, templates: Mapping[str, NodeTemplate]) -> list[GroupState]:
        states = []
        for gid, g in loop.groups.items():
            unsafe = None
            if self.registry.backoff.is_backed_off(gid, loop.now):
                unsafe = SkipReason.BACKOFF
            elif not self.registry.is_node_group_healthy(gid):
                unsafe = SkipReason.NOT_READY_FOR_SCALE_UP
            try:
                target = g.target_size()
            except CloudProviderError:
                unsafe, target = SkipReason.NOT_READY_FOR_SCALE_UP, 0
            zero_or_max = self.registry.group_options(gid).zero_or_max_node_scaling
            states.append(
                GroupState(
                    gid,
                    g.min_size(),
                    g.max_size(),
                    target,
                    templates.get(gid),
                    unsafe,
                    g.exist(),
                    zero_or_max,
                )
            )
        return states

    def _scale_up(
        self,
        loop: _Loop,
        pods: list[Pod],
        templates: Mapping[str, NodeTemplate],
        snapshot_nodes: Sequence[NodeView],
    ) -> None:
        now = loop.now
        groups = self._group_states(loop, templates)
        ctx = ExpansionContext(now=now, cluster_node_count=len(loop.nodes))
        plan = plan_scale_up(pods, groups, snapshot_nodes, self.settings, self.strategy, ctx)
        for ev in plan.events:
            self._emit_cluster_event(loop, ev)
        loop.result.scale_up_result = str(plan.result)
        executed = []
        for info in plan.infos:
            group = loop.groups[info.group]
            data = {"group": info.group, "from": info.current_size, "to": info.new_size}
            self._emit(
                loop,
                CAEvent(
                    "Normal",
                    str(EventReason.SCALED_UP_GROUP),
                    f"NodeGroup/{info.group}",
                    f"Scale-up: setting group {info.group} size to {info.new_size} instead of "
                    f"{info.current_size} (max: {info.max_size})",
                    data,
                ),
            )
            try:
                group.increase_size(info.delta)
            except CloudProviderError as exc:
                self._emit(
                    loop,
                    CAEvent(
                        "Warning",
                        str(EventReason.FAILED_TO_SCALE_UP_GROUP),
                        f"NodeGroup/{info.group}",
                        f"Scale-up failed for group {info.group}: {exc}",
                        {"group": info.group},
                    ),
                )
                error = InstanceErrorInfo(ErrorClass.Other, "cloudProviderError", str(exc))
                self.registry.register_failed_scale_up(info.group, error, now)
                loop.result.stats.failed_scale_ups += 1
                self._backoff_event(loop, info.group)
                loop.result.scale_up_result = str(ScaleUpResult.ERROR)
                break
            self.registry.register_scale_up(info.group, info.delta, now)
            executed.append(info)
            loop.result.stats.scale_ups += 1
            loop.result.stats.nodes_added += info.delta
            self._emit(
                loop,
                CAEvent(
                    "Normal",
                    str(EventReason.SCALED_UP_GROUP),
                    f"NodeGroup/{info.group}",
                    f"Scale-up: group {info.group} size set to {info.new_size} instead of "
                    f"{info.current_size} (max: {info.max_size})",
                    data,
                ),
            )
        if executed:
            self.registry.recalculate()
            self.times = replace(self.times, last_scale_up=now)
            text = "[" + " ".join(str(i) for i in executed) + "]"
            groups_data = [{"group": i.group, "from": i.current_size, "to": i.new_size} for i in executed]
            first = groups_data[0]
            for p in plan.pods_triggered:
                self._emit(
                    loop,
                    CAEvent(
                        "Normal",
                        str(EventReason.TRIGGERED_SCALE_UP),
                        f"Pod/{p.namespace}/{p.name}",
                        f"pod triggered scale-up: {text}",
                        {"groups": groups_data, **first},
                    ),
                )
        helped = {id(p) for p in plan.pods_triggered} if executed else set()
        remaining = [p for p in pods if id(p) not in helped]
        if remaining and not executed and plan.result is not ScaleUpResult.ERROR:
            self._not_triggered(loop, remaining, groups, plan.skipped)

    def _not_triggered(
        self,
        loop: _Loop,
        pods: list[Pod],
        groups: Sequence[GroupState],
        skipped: Mapping[str, tuple[str, ...]],
    ) -> None:
        for pg in group_pods(pods):
            rep = pg.representative
            per_group: dict[str, tuple[str, ...]] = {}
            for g in groups:
                if not g.exists:
                    continue
                if g.id in skipped:
                    per_group[g.id] = tuple(skipped[g.id])
                elif g.template is not None:
                    reasons = _predicate_reasons(rep, g.template)
                    if reasons:
                        per_group[g.id] = reasons
            message = not_trigger_scale_up_message(per_group)
            counts: dict[str, int] = {}
            for reasons in per_group.values():
                for r in set(reasons):
                    counts[r] = counts.get(r, 0) + 1
            for p in pg.pods:
                self._emit(
                    loop,
                    CAEvent(
                        "Normal",
                        str(EventReason.NOT_TRIGGER_SCALE_UP),
                        f"Pod/{p.namespace}/{p.name}",
                        message,
                        {"reasons": dict(sorted(counts.items()))},
                    ),
                )

    # -- scale-down ----------------------------------------------------------------------------------
    def _scale_down(
        self,
        loop: _Loop,
        snapshot: ClusterSnapshot,
        all_nodes: Sequence[NodeView],
        drain_ctx: DrainContext,
        disabled: bool,
        deletions: Sequence[Deletion],
    ) -> None:
        now = loop.now
        result = loop.result
        self.recently_unremovable = {k: v for k, v in self.recently_unremovable.items() if v > now}
        targets: dict[str, int] = {}
        for gid, g in loop.groups.items():
            try:
                targets[gid] = g.target_size()
            except CloudProviderError:
                continue
        being_deleted = {d.node.name for d in deletions} | {
            n.name for n in all_nodes if is_being_deleted(n, now)
        }
        candidates = [
            n
            for n in all_nodes
            if n.name not in being_deleted
            and (cg := loop.group_of.get(n.name)) is not None
            and cg in targets
            and targets[cg] > loop.groups[cg].min_size()
        ]
        destinations = [n.name for n in all_nodes if n.name not in being_deleted]
        snap_pods = {n.name: list(snapshot.pods_on(snapshot.index_of(n.name))) for n in all_nodes}
        eligibility = filter_out_unremovable(
            candidates,
            EligibilityInput(
                pods_by_node=snap_pods,
                group_of=lambda n: loop.group_of.get(n.name),
                group_options=self.registry.group_options,
                scale_down_unready_enabled=self.options.scale_down_unready_enabled,
                ignore_mirror_pods_utilization=self.options.ignore_mirror_pods_utilization,
                recently_unremovable=self.recently_unremovable,
            ),
            now,
        )
        for name, why in eligibility.unremovable.items():
            result.unremovable[name] = str(why)
        eligible = list(eligibility.candidates)
        # Empty nodes first, then the nodes that were unneeded last loop.
        eligible.sort(key=lambda name: (bool(snap_pods.get(name)), name not in self.unneeded))
        by_name = {n.name: n for n in all_nodes}
        check = simulate_removals(
            snapshot,
            eligible,
            destinations,
            drain=lambda pods: drain_node(pods, drain_ctx),
        )
        found: list[tuple[NodeView, bool]] = []
        for r in check.results:
            if r.removable:
                found.append((by_name[r.node], not r.moves))
            else:
                result.unremovable[r.node] = str(r.outcome)
                self.recently_unremovable[r.node] = now + self.options.unremovable_node_recheck_timeout
        self.unneeded = update_unneeded(self.unneeded, found, now)
        result.unneeded = {k: u.since for k, u in self.unneeded.items()}
        self._update_soft_taints(loop, all_nodes)
        if disabled or scale_down_in_cooldown(
            self.times,
            now,
            delay_after_add=self.options.scale_down_delay_after_add,
            delay_after_failure=self.options.scale_down_delay_after_failure,
            delay_after_delete=self.options.scale_down_delay_after_delete,
            disabled_this_loop=disabled,
            delay_type_local=self.options.scale_down_delay_type_local,
        ):
            result.scale_down_result = str(ScaleDownResult.IN_COOLDOWN)
            return
        if not self.unneeded:
            result.scale_down_result = str(ScaleDownResult.NO_UNNEEDED)
            return
        in_progress: dict[str, int] = {}
        drain_in_progress = 0
        for d in deletions:
            in_progress[d.group.id()] = in_progress.get(d.group.id(), 0) + 1
            if any(self._must_move(p) for p in loop.pods_by_node.get(d.node.name, ())):
                drain_in_progress += 1
        sizes = {
            gid: GroupSizes(t, loop.groups[gid].min_size(), in_progress.get(gid, 0))
            for gid, t in targets.items()
        }
        usage = self.limits.usage(all_nodes)
        removed: dict[str, int] = {}

        def within_min_limits(node: NodeView) -> bool:
            per_node = node_resources(node)
            total = {r: removed.get(r, 0) + v for r, v in per_node.items()}
            if not self.limits.within_minimum(usage, total):
                return False
            for r, v in per_node.items():
                removed[r] = removed.get(r, 0) + v
            return True

        removable = removable_at(
            list(self.unneeded.values()),
            now,
            lambda n: loop.group_of.get(n.name),
            self.registry.group_options,
            sizes,
            within_min_limits,
        )
        for name, why in removable.unremovable.items():
            result.unremovable[name] = str(why)
        pairs_empty = [(n, eg) for n in removable.empty if (eg := loop.group_of.get(n)) is not None]
        pairs_drain = [(n, dg) for n in removable.drain if (dg := loop.group_of.get(n)) is not None]
        empty, drain = crop_nodes(
            group_nodes(pairs_empty),
            group_nodes(pairs_drain),
            Budget(
                self.options.max_scale_down_parallelism,
                self.options.max_drain_parallelism,
                len(deletions) - drain_in_progress,
                drain_in_progress,
            ),
        )
        started: list[Deletion] = []
        for batch, is_empty in ((empty, True), (drain, False)):
            for gn in batch:
                for name in gn.nodes:
                    node = by_name[name]
                    taints = add_to_be_deleted(node, now)
                    self.port.set_node_taints(name, taints)
                    tainted = replace(node, taints=taints)
                    started.append(Deletion(tainted, loop.groups[gn.group], now))
                    data = {"group": gn.group, "node": name}
                    self._emit(
                        loop,
                        CAEvent(
                            "Normal",
                            str(EventReason.SCALE_DOWN),
                            f"Node/{name}",
                            "marked the node as toBeDeleted/unschedulable",
                            data,
                        ),
                    )
                    if is_empty:
                        msg = f'Scale-down: removing empty node "{name}"'
                        reason = str(EventReason.SCALE_DOWN_EMPTY)
                    else:
                        moving = [p.name for p in snap_pods.get(name, ()) if self._must_move(p)]
                        util = eligibility.utilization.get(name)
                        util_text = (
                            f"{{{util.cpu:.2f} {util.memory:.2f} {util.utilization:.2f}}}" if util else "{}"
                        )
                        msg = (
                            f"Scale-down: removing node {name}, utilization: {util_text}, "
                            f"pods to reschedule: {','.join(moving)}"
                        )
                        reason = str(EventReason.SCALE_DOWN)
                    self._emit(loop, CAEvent("Normal", reason, f"Node/{name}", msg, data))
                    self.unneeded.pop(name, None)
        if not started:
            result.scale_down_result = str(ScaleDownResult.NO_NODE_DELETED)
            return
        result.scale_down_result = str(ScaleDownResult.NODE_DELETE_STARTED)
        result.stats.scale_downs += 1
        self.times = replace(self.times, last_scale_down_delete=now)
        continue_deletions(
            started,
            loop.pods_by_node,
            self.port,
            drain_ctx,
            now,
            max_pod_eviction_time=self.options.max_pod_eviction_time,
            is_deleting_in_cloud=lambda n: False,
            register_scale_down=lambda gid, node: self.registry.register_scale_down(gid, node, now),
            events=loop.result.events,
            stats=result.stats,
        )

    def _update_soft_taints(self, loop: _Loop, nodes: Sequence[NodeView]) -> None:
        """``DeletionCandidateOfClusterAutoscaler=<unix seconds>:PreferNoSchedule`` on unneeded nodes of
        autoscaled groups, removed once they are needed again (CA spec §7.9), within the per-loop budget."""
        budget = self.options.max_bulk_soft_taint_count
        if budget <= 0:
            return
        for node in nodes:
            if budget <= 0:
                break
            if loop.group_of.get(node.name) is None or to_be_deleted_time(node) is not None:
                continue
            has = any(t.key == DELETION_CANDIDATE_TAINT for t in node.taints)
            wanted = node.name in self.unneeded
            if has == wanted:
                continue
            if wanted:
                since = int(self.unneeded[node.name].since)
                taints = (*node.taints, Taint(DELETION_CANDIDATE_TAINT, str(since), "PreferNoSchedule"))
            else:
                taints = remove_taint(node, DELETION_CANDIDATE_TAINT)
            self.port.set_node_taints(node.name, taints)
            budget -= 1

    def _restore_unneeded(self, loop: _Loop) -> None:
        """At start: with ``--node-deletion-candidate-ttl`` > 0, unneeded timers come back from the soft
        taints (younger than the TTL); with ``--max-bulk-soft-taint-count=0``, stale soft taints go."""
        ttl = self.options.node_deletion_candidate_ttl
        for i, node in enumerate(loop.nodes):
            since = next((t.value for t in node.taints if t.key == DELETION_CANDIDATE_TAINT), None)
            if since is None:
                continue
            try:
                when = float(since)
            except ValueError:
                when = float("-inf")
            fresh = ttl > 0 and loop.now - when < ttl
            if fresh:
                self.unneeded[node.name] = UnneededNode(node, when, False)
            elif self.options.max_bulk_soft_taint_count == 0:
                taints = remove_taint(node, DELETION_CANDIDATE_TAINT)
                self.port.set_node_taints(node.name, taints)
                loop.nodes[i] = replace(node, taints=taints)

    @staticmethod
    def _must_move(pod: Pod) -> bool:
        return pod.phase not in ("Succeeded", "Failed") and must_move(pod)


def _predicate_reasons(pod: Pod, template: NodeTemplate) -> tuple[str, ...]:
    """Why ``pod`` does not fit an empty node of this template (the scheduler's filter reasons)."""
    snap = ClusterSnapshot([_estimation_node(template, template.node.name)])
    checker = FitChecker(snap)
    facts = checker.facts(pod)
    failure = checker.diagnose(facts, np.array([0], np.intp))[0]
    return failure.reasons if failure is not None else ()
