"""The Cluster Autoscaler's main loop: ``StaticAutoscaler.RunOnce`` (CA spec §1), as a functional core.

``StaticAutoscaler(cloud, port, options).run_once(world, now)`` reads the world (a :class:`World`:
nodes, pods, PDBs, ConfigMaps, controllers) and the cloud through the cloud-provider port, and acts
through the cloud (``IncreaseSize``, ``DeleteNodes``, ``DecreaseTargetSize``) and the
:class:`~kubetide.model.api.ClusterPort` (single node taints, evictions). It reads no clock and does no
I/O; the events, counters, metrics and status of the loop are returned in a :class:`LoopResult`.

This module only orders the stages; each lives in :mod:`kubetide.cluster.loop`: ``housekeeping``
(startup cleanup, unregistered and failed instances, group sizes), ``scaleup_decision`` (decides a
:class:`ScaleUpDecision`) and ``scaleup_actuator`` (executes it), ``scaledown_plan`` (decides a
:class:`ScaleDownPlan`) and ``scaledown_actuator`` / ``deletions`` (execute it and resume drains).

The order is upstream's: refresh the cloud, build the snapshot, templates, cluster state, remove
unregistered instances, health check, delete failed creations, fix group sizes, filter pods that fit
on existing or upcoming nodes, scale up, scale down.

Where kubetide deliberately differs, it is to fix what users hit (``notes/ecosystem.md``):

* **restart safety.** Everything a restarted CA must not forget is read back from the cluster: a node
  being deleted keeps its ``ToBeDeletedByClusterAutoscaler`` taint and the new CA resumes its drain
  (upstream strips those taints at start) without deleting it a second time (a deletion between loops
  asks the cloud whether the instance is already terminating); the cluster state's clocks (scale-up
  requests, backoff, unregistered first-seen times, wrong group sizes) are written to a state ConfigMap
  and read back at start. Without it the new CA is CA 1.31 after a restart: a target above the nodes
  counts as upcoming;
* **fast failover.** Instance creation errors (stockouts) back the group off at once (§2.7); a group
  whose scale-up timed out is not chosen again while a group not tried yet can take the pods
  (``--failover-to-untried-groups``), and an empty group's undelivered target is fixed like any other;
* **template drift.** A group's claimed template is compared with its real nodes and every difference
  is reported once (``NodeTemplateMismatch``); real nodes win, and are cached for scale-from-zero;
* **failure modes of issue 8** (the README's table lists each): Nodes without providerID matched by
  address, drains re-checked before evicting, a stuck group's provision clock kept, failed deletions backed off, and
  ``--scale-up-progress-timeout``.

Drains run as upstream's deletion goroutine does (``--node-delete-delay-after-taint``, evictions with
CA's grace periods, the wait for the evicted pods to go before ``DeleteNodes``), in rounds: each loop
and the deletion wake-ups between loops (:meth:`StaticAutoscaler.run_deletions` at
``LoopResult.deletions_due_at``).

Decisions that changed after CA 1.31 follow ``--ca-compatibility-version`` (:mod:`kubetide.cluster.compat`).

Simplifications: frequent loops (``--frequent-loops-enabled``), the pods of nodes being drained in
scale-up, and salvo / graceful-degradation modes are not implemented.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat

from kubetide.cloud.instance import CloudProviderError, InstanceState, NodeTemplate, NotImplementedByProvider
from kubetide.cloud.provider import CloudProvider, PricingModel, bulk_lookup
from kubetide.cluster.capacity.stage import CapacityStage
from kubetide.cluster.clusterstate.learned_templates import (
    TEMPLATES_CONFIG_MAP,
    decode_templates,
    encode_templates,
)
from kubetide.cluster.clusterstate.matching import NodeMatching, match_nodes_without_provider_id
from kubetide.cluster.clusterstate.persisted import STATE_CONFIG_MAP, decode_state, encode_state
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.expander import ChainStrategy, ExpanderDependencies, build_strategy
from kubetide.cluster.expander.priority import CONFIG_MAP_NAME
from kubetide.cluster.gpu import with_unready_gpus_unready
from kubetide.cluster.loop import housekeeping
from kubetide.cluster.loop.context import CA_EVENT_OBJECT, LoopContext, Recorder
from kubetide.cluster.loop.deletions import (
    Deletion,
    DrainSettings,
    DrainState,
    continue_deletions,
    to_be_deleted_taint,
)
from kubetide.cluster.loop.report import candidates_by_group, loop_metrics
from kubetide.cluster.loop.scaledown_actuator import execute_scale_down
from kubetide.cluster.loop.scaledown_plan import ScaleDownPlan, ScaleDownPlanner
from kubetide.cluster.loop.scaleup_actuator import execute_scale_up
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision, decide_scale_up
from kubetide.cluster.loop.snapshot import build_snapshot
from kubetide.cluster.loop.templates import TemplateProvider, daemonset_exemplars
from kubetide.cluster.loop.timing import FunctionLabel, FunctionTimer, Stopwatch
from kubetide.cluster.loop.world import CAEvent, LoopMetrics, LoopResult, LoopStats, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import (
    EventReason,
    KubetideEventReason,
    ScaleDownResult,
    ScaleUpResult,
    UnremovableReason,
)
from kubetide.cluster.scaledown.cooldown import ScaleDownTimes
from kubetide.cluster.scaledown.taints import MAX_NODE_DELETION_TIME_S, is_being_deleted, to_be_deleted_time
from kubetide.cluster.scaledown.unneeded import UnneededNode
from kubetide.cluster.scaleup.limits import ResourceLimits
from kubetide.cluster.scaleup.orchestrator import ScaleUpSettings
from kubetide.cluster.scaleup.similar import BASIC_IGNORED_LABELS, PROVIDER_IGNORED_LABELS, SimilarityRules
from kubetide.cluster.status import StatusTracker
from kubetide.cluster.taintconfig import TaintConfig, with_startup_tainted_unready
from kubetide.model.api import ClusterPort
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import DrainContext, DrainOptions
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.kept import SnapshotKeeper

__all__ = [
    "CAEvent",
    "LoopMetrics",
    "LoopResult",
    "LoopStats",
    "ScaleDownPlan",
    "ScaleUpDecision",
    "StaticAutoscaler",
    "World",
]


@dataclass
class _Carried:
    scaled_down: dict[str, int] = field(default_factory=dict)
    evictions: dict[str, int] = field(default_factory=dict)
    api_errors: int = 0


_provider_id = operator.attrgetter("provider_id")
_NAME = operator.attrgetter("name")


class StaticAutoscaler:
    """One CA process: the state kept between loops (cluster state, templates cache, scale-down planner,
    cooldown times, event deduplication, last status) and :meth:`run_once`, the stages in order.
    A restart is a new instance; what must survive it lives in the cluster and the cloud."""

    def __init__(
        self,
        cloud: CloudProvider,
        port: ClusterPort,
        options: AutoscalingOptions | None = None,
        *,
        start_time: float = 0.0,
        seed: int = 0,
        stopwatch: Stopwatch | None = None,
    ) -> None:
        """``stopwatch``: read only to time CA's functions (``cluster.loop.timing``); None: not timed."""
        self.cloud = cloud
        self.stopwatch = stopwatch
        self.port = port
        self.options = options or AutoscalingOptions()
        o = self.options
        self.registry = ClusterStateRegistry(cloud, o)
        self.taints = TaintConfig.from_flags(
            o.startup_taint, o.ignore_taint, o.status_taint, o.startup_taint_prefix
        )
        self.templates = TemplateProvider(
            scale_from_unschedulable=o.scale_from_unschedulable,
            cache_ttl=o.node_info_cache_expire_time,
            taints=self.taints,
        )
        self.times = ScaleDownTimes.at_start(start_time)
        self.first_loop = True
        self.limits = ResourceLimits.from_options(o)
        self.planner = ScaleDownPlanner(o, self.limits)
        self.recorder = Recorder(o.record_duplicated_events, o.namespace)
        self.status = StatusTracker()
        self._world: World | None = None
        self._state_restored = False
        self._seed = seed
        self._hinting = HintingSimulator()  # filter of schedulable pods: hints kept between loops
        self._snapshots = SnapshotKeeper()  # the loop's snapshot, updated from one loop to the next
        self._carried = _Carried()  # what deletions between loops counted, for the next loop's metrics
        # When this process tainted each node it is deleting: the taint keeps whole seconds only, and
        # --node-delete-delay-after-taint counts from the moment itself (after a restart, the taint's).
        self._tainted_at: dict[str, float] = {}
        self.drain_settings = DrainSettings.from_options(o)
        # The drains this process runs, by node (upstream's drain goroutines' state), and the nodes whose
        # DeleteNodes it called, never called twice.
        self._drains: dict[str, DrainState] = {}
        self._deleted: set[str] = set()
        # group -> (the template last seen, its content fingerprint, the content's since)
        self._template_marks: dict[str, tuple[NodeTemplate, str, float]] = {}
        # The last learned templates given to encode_templates, and its text.
        self._templates_encoded: tuple[dict[str, tuple[NodeTemplate, float]], dict[str, str]] | None = None
        self._unremovable_said: dict[str, str] = {}  # node -> the unremovable reason last reported
        self.strategy = self._build_strategy()
        self.settings = ScaleUpSettings(
            max_nodes_total=o.max_nodes_total,
            max_nodes_per_scaleup=o.max_nodes_per_scaleup,
            balance_similar_node_groups=o.balance_similar_node_groups,
            similarity=SimilarityRules(
                memory_difference_ratio=o.memory_difference_ratio,
                max_allocatable_difference_ratio=o.max_allocatable_difference_ratio,
                max_free_difference_ratio=o.max_free_difference_ratio,
                ignored_labels=BASIC_IGNORED_LABELS
                | PROVIDER_IGNORED_LABELS
                | frozenset(o.balancing_ignore_label),
                balancing_labels=tuple(o.balancing_label),
            ),
            limits=self.limits,
            failover_to_untried_groups=o.failover_to_untried_groups,
            compat=o.compat,
        )
        # CapacityBuffer, ProvisioningRequest and CapacityQuota (None: every capacity flag off).
        self.capacity = CapacityStage.from_options(o)
        self.drain_options = DrainOptions(
            skip_nodes_with_system_pods=o.skip_nodes_with_system_pods,
            skip_nodes_with_local_storage=o.skip_nodes_with_local_storage,
            skip_nodes_with_custom_controller_pods=o.skip_nodes_with_custom_controller_pods,
            min_replica_count=o.min_replica_count,
            blocking_system_pod_timeout_s=o.blocking_system_pod_distruption_timeout,
        )

    # The planner's state, under the names callers and tests have used.
    @property
    def unneeded(self) -> dict[str, UnneededNode]:
        return self.planner.unneeded

    @unneeded.setter
    def unneeded(self, value: dict[str, UnneededNode]) -> None:
        self.planner.unneeded = value

    @property
    def recently_unremovable(self) -> dict[str, float]:
        return self.planner.recently_unremovable

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

    # -- the loop ------------------------------------------------------------------------------------
    def run_once(self, world: World, now: float) -> LoopResult:
        allowed = self.options.allowed_scheduler_names
        if allowed:
            # Upstream's listPods: with --allowed-scheduler-names, pods of other schedulers (scheduled or
            # not) are left out of the loop's pod list altogether.
            kept = frozenset(allowed)
            pods = [p for p in world.pods if p.scheduler_name in kept]
            world = replace(world, pods=pods, pods_by_node=None, unbound_pods=None)
        result = LoopResult()
        timer = FunctionTimer(self.stopwatch, result.function_durations)  # updateClusterState starts here
        self._world = world
        try:
            loop = self._context(world, now, result, timer)
            if loop is None:
                return result
            # Deferred to the end of the loop whatever happens, as upstream writes its status (§1 step 15).
            unschedulable = self._run(loop)
            self._finish(loop, unschedulable)
            return result
        finally:
            self._world = None  # read during the loop only; a source may then reuse what it showed

    def _context(
        self, world: World, now: float, result: LoopResult, timer: FunctionTimer | None = None
    ) -> LoopContext | None:
        timer = timer or FunctionTimer()
        refreshed = timer.start()
        try:
            self.cloud.refresh()
            groups = {g.id(): g for g in self.cloud.node_groups()}
        except CloudProviderError as exc:
            result.error = f"failed to refresh cloud provider: {exc}"
            return None
        finally:
            timer.observe(FunctionLabel.CLOUD_PROVIDER_REFRESH, refreshed)
        if all(map(_provider_id, world.nodes)):
            matching = NodeMatching(tuple(world.nodes))  # the usual case: no cloud call
        else:
            try:
                instances = {gid: g.nodes() for gid, g in groups.items()}
            except CloudProviderError as exc:
                result.error = f"failed to list the cloud's instances: {exc}"
                return None
            matching = match_nodes_without_provider_id(world.nodes, instances)
        # Upstream's FilterOutNodesWithStartupTaints: a Ready node still carrying a startup taint is not ready.
        nodes = with_startup_tainted_unready(matching.nodes, self.taints)
        # And FilterOutNodesWithUnreadyResources: a GPU node whose GPUs are not allocatable yet.
        gpu_label = self.cloud.gpu_label()
        nodes = with_unready_gpus_unready(nodes, gpu_label)
        names = list(map(_NAME, nodes))  # the world's nodes' names, in order
        group_of = self._groups_of(nodes, names)
        lookups_failed = False
        if group_of is None:
            group_of = {}
            for n in nodes:
                try:
                    g = self.cloud.node_group_for_node(n)
                except CloudProviderError:
                    g, lookups_failed = None, True
                group_of[n.name] = g.id() if g is not None else None
        pods_by_node: dict[str, Sequence[Pod]]
        if world.pods_by_node is not None:  # kept by the source: a loop need not walk 30,000 pods
            index = world.pods_by_node
            pods_by_node = dict(zip(names, map(index.get, names, repeat(())), strict=True))
        else:
            buckets: dict[str, list[Pod]] = {n.name: [] for n in world.nodes}
            for p in world.pods:
                bucket = buckets.get(p.node_name)
                if bucket is not None and p.phase not in ("Succeeded", "Failed"):
                    bucket.append(p)
            pods_by_node = dict(buckets)
        unidentified = tuple(n.name for n in matching.unidentified if is_node_ready(n))
        loop = LoopContext(
            now,
            world,
            result,
            nodes,
            group_of,
            groups,
            pods_by_node,
            unidentified=unidentified,
            gpu_label=gpu_label,
            groups_known=not lookups_failed,
            timer=timer,
        )
        self._report_nodes_without_provider_id(loop, matching)
        return loop

    def _groups_of(self, nodes: Sequence[NodeView], names: list[str]) -> dict[str, str | None] | None:
        """Every node's group id from a provider that answers in bulk; None when it does not, or when
        some node's lookup fails (the caller then asks node by node, noting which failed)."""
        cloud = bulk_lookup(self.cloud)
        if cloud is None:
            return None
        try:
            ids = cloud.node_group_ids(nodes)
        except (CloudProviderError, NotImplementedByProvider):
            return None
        return dict(zip(names, ids, strict=True))

    def _report_nodes_without_provider_id(self, loop: LoopContext, matching: NodeMatching) -> None:
        for m in matching.matched:
            self.recorder.emit(
                loop,
                CAEvent(
                    "Warning",
                    str(KubetideEventReason.NODE_WITHOUT_PROVIDER_ID),
                    f"Node/{m.node}",
                    f"node {m.node} has no spec.providerID; matched to instance {m.instance} of node group "
                    f"{m.group} by its address {m.address}",
                    {"node": m.node, "group": m.group, "instance": m.instance},
                ),
            )
        for n in matching.unidentified:
            self.recorder.emit(
                loop,
                CAEvent(
                    "Warning",
                    str(KubetideEventReason.NODE_WITHOUT_PROVIDER_ID),
                    f"Node/{n.name}",
                    f"node {n.name} has no spec.providerID and matches no instance of any node group; "
                    "while it is Ready, no instance is removed as unregistered",
                    {"node": n.name},
                ),
            )

    def _run(self, loop: LoopContext) -> int:
        """The stages in upstream's order; returns the unschedulable pods count (for the metrics)."""
        now, world, result, o = loop.now, loop.world, loop.result, self.options
        if not o.scale_up_from_zero and not any(is_node_ready(n) for n in loop.nodes):
            result.error = "no ready nodes: the loop is skipped (--scale-up-from-zero=false)"
            return 0
        if self.first_loop:
            self._restore_state(loop)
            housekeeping.startup_cleanup(loop, self.port, self.recorder)
            self.planner.unneeded.update(housekeeping.restore_unneeded(loop, o, self.port, self.recorder))
        templates, mismatches = self.templates.compute(
            list(loop.groups.values()),
            loop.nodes,
            loop.group_of,
            loop.pods_by_node,
            now,
            lambda: daemonset_exemplars(world.pods, world.daemonsets),
        )
        for m in mismatches:
            self.recorder.emit(
                loop,
                CAEvent(
                    "Warning",
                    str(KubetideEventReason.NODE_TEMPLATE_MISMATCH),
                    f"NodeGroup/{m.group}",
                    f"node group {m.group}: {m.resource} differs: the provider's template has {m.template}, "
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
            # The groups just looked up serve again; after a failed lookup the registry asks itself
            # (and its update fails, as upstream's).
            update = self.registry.update_nodes(loop.nodes, now, loop.group_of if loop.groups_known else None)
        except CloudProviderError as exc:
            self.planner.unneeded = {}
            result.error = f"failed to update cluster state: {exc}"
            return 0
        housekeeping.apply_cluster_state_update(loop, update, self.registry, self.recorder)
        loop.timer.observe(FunctionLabel.UPDATE_STATE, loop.timer.loop_started)
        self.first_loop = False
        housekeeping.remove_old_unregistered(loop, self.registry, o, self.recorder)
        if not self.registry.is_cluster_healthy():
            self.planner.unneeded = {}
            self.recorder.emit(
                loop,
                CAEvent(
                    "Warning", str(EventReason.CLUSTER_UNHEALTHY), CA_EVENT_OBJECT, "Cluster is unhealthy"
                ),
            )
            result.scale_up_result = "ClusterUnhealthy"
            return 0
        housekeeping.delete_created_with_errors(loop, self.registry, o, self.recorder)
        if housekeeping.fix_node_group_sizes(loop, self.registry, self.recorder):
            return 0

        deletions = self._deletions_in_progress(loop)
        drain_ctx = DrainContext(now, self.drain_options, tuple(world.pdbs), world.controllers)
        if deletions:
            continue_deletions(
                loop,
                deletions,
                loop.pods_by_node,
                self.port,
                self.recorder,
                drain_ctx,
                settings=self.drain_settings,
                drains=self._drains,
                is_deleting_in_cloud=self._deleting_in_cloud,
                register_scale_down=lambda gid, node: self.registry.register_scale_down(gid, node, now),
            )

        capacity = self.capacity
        if capacity is not None:
            capacity.begin(loop, self.recorder)
        view = build_snapshot(loop, self.registry, templates, o, self._hinting, self._snapshots, capacity)
        snapshot, all_nodes, to_help = view.snapshot, list(view.all_nodes), list(view.to_help)

        # -- scale-up: decide, then act ----------------------------------------------------------------
        scale_up_started = loop.timer.start()
        snapshot_nodes = [*all_nodes, *view.placeholders]

        def decide(pods: list[Pod], settings: ScaleUpSettings, force: bool = False) -> ScaleUpDecision:
            return decide_scale_up(
                loop,
                pods,
                o,
                self.registry,
                templates,
                snapshot_nodes,
                settings,
                self.strategy,
                snapshot,
                force,
            )

        if capacity is None:
            decision = decide(to_help, self.settings)
        else:
            decision = capacity.decide_scale_up(
                loop, to_help, self.settings, snapshot, snapshot_nodes, decide
            )
        result.scale_up = decision
        executed = execute_scale_up(loop, decision, self.registry, self.recorder)
        if capacity is not None:
            capacity.after_scale_up(loop, decision, executed, self.recorder)
        # A check-capacity answer is a successful scale-up that raised no group (upstream's lastScaleUpTime).
        answered = capacity is not None and decision.plan is not None and not decision.plan.infos
        if executed or (answered and result.scale_up_result == ScaleUpResult.SUCCESSFUL):
            self.times = replace(self.times, last_scale_up=now)
        if decision.plan is not None:  # CA times the orchestrator only in a loop that asks it
            loop.timer.observe(FunctionLabel.SCALE_UP, scale_up_started)
        if decision.plan is not None and result.scale_up_result in _ENDS_LOOP:
            # static_autoscaler.go RunOnce, postScaleUp: a scale-up that succeeded (or failed with an
            # error) ends the loop: no unneeded nodes, no soft taints, no scale-down, no min sizes.
            if result.scale_up_result == ScaleUpResult.SUCCESSFUL:
                result.scale_down_result = str(ScaleDownResult.IN_COOLDOWN)
            self._back_off_failed_deletions(loop)
            return len(to_help)

        # -- scale-down: decide, then act --------------------------------------------------------------
        if o.scale_down_enabled:
            if capacity is not None:
                self.planner.quota_minimums = capacity.min_quotas(loop, snapshot)
            unneeded_started = loop.timer.start()
            plan = self.planner.plan(
                loop,
                self.registry,
                snapshot,
                all_nodes,
                drain_ctx,
                deletions,
                self.times,
                decision.disables_scale_down,
            )
            loop.timer.observe(FunctionLabel.FIND_UNNEEDED, unneeded_started)
            scale_down_started = loop.timer.start()
            started = execute_scale_down(
                loop,
                plan,
                self.port,
                self.recorder,
                drain_ctx,
                settings=self.drain_settings,
                drains=self._drains,
                register_scale_down=lambda gid, node: self.registry.register_scale_down(gid, node, now),
            )
            if plan.result is not ScaleDownResult.IN_COOLDOWN:
                loop.timer.observe(FunctionLabel.SCALE_DOWN, scale_down_started)
            self.planner.forget([item.node.name for item in started])
            for item in started:
                self._tainted_at[item.node.name] = now
            if result.scale_down_result == ScaleDownResult.NODE_DELETE_STARTED:
                self.times = replace(self.times, last_scale_down_delete=now)
            elif result.scale_down_result == ScaleDownResult.ERROR:
                # RunOnce: StartDeletion's error (a taint refused) sets lastScaleDownFailTime and ends
                # the loop with it, before --enforce-node-group-min-size.
                self.times = replace(self.times, last_scale_down_fail=now)
                result.error = "failed to scale down: couldn't taint a node with ToBeDeleted"
                self._report_unremovable(loop)
                self._back_off_failed_deletions(loop)
                return len(to_help)
        self._report_unremovable(loop)
        self._back_off_failed_deletions(loop)
        if o.enforce_node_group_min_size and housekeeping.enforce_min_sizes(
            loop, self.registry, o, self.recorder
        ):
            self.times = replace(self.times, last_scale_up=now)  # postScaleUp: lastScaleUpTime
        return len(to_help)

    def _report_unremovable(self, loop: LoopContext) -> None:
        """kubetide: a Normal ``UnremovableNode`` event on a node when the reason that keeps an otherwise
        removable node changes (CA only logs these; users ask for them as events). The everyday reasons
        (busy, not unneeded long enough, recently checked, being deleted, not autoscaled) are not
        reported, and each reason once until it changes."""
        result = loop.result
        said = self._unremovable_said
        for name in [n for n in said if n not in result.unremovable]:
            del said[name]
        news = [
            (n, r) for n, r in result.unremovable.items() if r in _REPORTED_UNREMOVABLE and said.get(n) != r
        ]
        for name, reason in sorted(news):  # by node name (few: most reasons are not reported)
            said[name] = reason
            data: dict[str, object] = {"node": name, "group": loop.group_of.get(name) or "", "reason": reason}
            detail = ""
            blocking = result.blocking_pods.get(name)
            if blocking is not None:
                data.update(pod=blocking[0], podReason=blocking[1])
                detail = f" (pod {blocking[0]}: {blocking[1]})"
            self.recorder.emit(
                loop,
                CAEvent(
                    "Normal",
                    str(KubetideEventReason.UNREMOVABLE_NODE),
                    f"Node/{name}",
                    f"node {name} cannot be removed: {reason}{detail}",
                    data,
                ),
            )

    def _back_off_failed_deletions(self, loop: LoopContext) -> None:
        """A deletion that failed (drain timed out or aborted, ``DeleteNodes`` refused), in a drain started
        this loop or resumed: scale-down waits ``--scale-down-delay-after-failure`` and the node is not a
        candidate again for ``--unremovable-node-recheck-timeout``. Upstream's asynchronous deletions do
        neither (only a failed taint sets the failure time), so a failing ``DeleteNodes`` was retried,
        with a fresh drain, as soon as the node was unneeded again."""
        if not loop.failed_deletions:
            return
        for name in loop.failed_deletions:  # abandoned and untainted: no longer a deletion of ours
            self._tainted_at.pop(name, None)
        self.times = replace(self.times, last_scale_down_fail=loop.now)
        until = loop.now + self.options.unremovable_node_recheck_timeout
        for name in loop.failed_deletions:
            self.planner.recently_unremovable[name] = until

    # -- state kept across restarts ------------------------------------------------------------------
    def _restore_state(self, loop: LoopContext) -> None:
        key = f"{self.options.namespace}/{STATE_CONFIG_MAP}"
        state = decode_state(loop.world.config_maps.get(key))
        if state is not None:
            self.registry.restore(state)
        learned = decode_templates(
            loop.world.config_maps.get(f"{self.options.namespace}/{TEMPLATES_CONFIG_MAP}")
        )
        for gid, entry in (learned or {}).items():
            self.templates.cache.setdefault(gid, entry)  # a node seen this process wins
            self._template_marks[gid] = (entry[0], _fingerprint(entry[0]), entry[1])
        self._state_restored = True

    def run_deletions(self, world: World, now: float, *, carry: bool = True) -> LoopResult:
        """Only the deletions in progress (drain, then delete), between loops: what upstream's deletion
        goroutine does once ``--node-delete-delay-after-taint`` has passed. No scale-up, no new
        scale-down decision, no status: the next loop does those. The nodes removed are in
        ``result.deleted_between_loops``; ``carry`` also counts them into the next loop's metrics
        (for a caller that does not count them itself)."""
        result = LoopResult()
        loop = self._context(world, now, result)
        if loop is None:
            return result
        deletions = self._deletions_in_progress(loop)
        if deletions:
            drain_ctx = DrainContext(now, self.drain_options, tuple(world.pdbs), world.controllers)
            continue_deletions(
                loop,
                deletions,
                loop.pods_by_node,
                self.port,
                self.recorder,
                drain_ctx,
                settings=self.drain_settings,
                drains=self._drains,
                # The cluster state was read by the last loop: ask the cloud now, so a node deleted
                # since (by this process's last round, or by the process before a restart) is not
                # deleted and counted again.
                is_deleting_in_cloud=self._deleting_in_cloud_now(loop),
                register_scale_down=lambda gid, node: self.registry.register_scale_down(gid, node, now),
            )
        self._deleted.update(loop.deleted)
        self._back_off_failed_deletions(loop)
        # Counted by the next loop's metrics (its counters' increments), as upstream's goroutine counts
        # into the same Prometheus counters the loop reports.
        result.deleted_between_loops = dict(loop.scaled_down)
        result.evicted_between_loops = dict(loop.evictions)
        if carry:
            _add(self._carried.scaled_down, loop.scaled_down)
            _add(self._carried.evictions, loop.evictions)
        self._carried.api_errors += loop.api_errors
        return result

    # -- deletions in progress (derived from taints) ------------------------------------------------
    def _deletions_in_progress(self, loop: LoopContext) -> list[Deletion]:
        out = []
        tainted_at = self._tainted_at
        for node in loop.nodes:
            since = to_be_deleted_time(node) if node.taints else None
            exact = tainted_at.get(node.name) if tainted_at else None
            if since is None and exact is None:
                continue  # not being deleted: most nodes
            gid = loop.group_of.get(node.name)
            if since is None and exact is not None and loop.now - exact < MAX_NODE_DELETION_TIME_S:
                # This process tainted it, but the world does not show the taint: a dry run (the write
                # was dropped) or a watch that has not caught up. The deletion it started goes on.
                node, since = replace(node, taints=(*node.taints, to_be_deleted_taint(exact))), exact
            if since is None or gid is None:
                continue
            # A drain this process runs goes on past the 5-minute window (its wait alone may take
            # --max-graceful-termination-sec), as upstream's goroutine does.
            if not is_being_deleted(node, loop.now) and node.name not in self._drains:
                continue
            if exact is not None and int(exact) == int(since):
                since = exact
            drain = self.planner.started_as_drain(node.name, loop.pods_by_node.get(node.name, ()))
            atomic = self.registry.group_options(gid).zero_or_max_node_scaling
            out.append(Deletion(node, loop.groups[gid], since, drain, atomic))
        if self._tainted_at or self._deleted:
            present = set(map(_NAME, loop.nodes))
            for name in [n for n in self._tainted_at if n not in present]:
                del self._tainted_at[name]
            self._deleted &= present
        if self._drains:  # a drain abandoned and started again starts afresh (its evictions announced again)
            deleting = {d.node.name for d in out}
            self._drains = {n: s for n, s in self._drains.items() if n in deleting}
        return out

    def _deleting_in_cloud(self, node: NodeView) -> bool:
        return (
            node.name in self._deleted
            or self.registry.instance_state(node.provider_id) is InstanceState.Deleting
        )

    def _deleting_in_cloud_now(self, loop: LoopContext) -> Callable[[NodeView], bool]:
        """:meth:`_deleting_in_cloud` from the cloud's instances as they are now (each group's read once,
        when a deletion of it comes up): an instance Deleting, or no longer in its group, is not
        deleted again. A group whose instances cannot be read falls back to the last loop's view."""
        states: dict[str, dict[str, InstanceState | None] | None] = {}

        def deleting(node: NodeView) -> bool:
            gid = loop.group_of.get(node.name)
            if node.name in self._deleted or gid is None or not node.provider_id:
                return self._deleting_in_cloud(node)
            if gid not in states:
                try:
                    instances = loop.groups[gid].nodes()
                except CloudProviderError:
                    states[gid] = None
                else:
                    states[gid] = {i.id: i.status.state if i.status else None for i in instances}
            known = states[gid]
            if known is None:
                return self._deleting_in_cloud(node)
            return node.provider_id not in known or known[node.provider_id] is InstanceState.Deleting

        return deleting

    # -- metrics and status ----------------------------------------------------------------------------
    def _finish(self, loop: LoopContext, unschedulable: int) -> None:
        self._deleted.update(loop.deleted)
        _add(loop.scaled_down, self._carried.scaled_down)
        _add(loop.evictions, self._carried.evictions)
        loop.api_errors += self._carried.api_errors
        self._carried = _Carried()
        loop.result.metrics = loop_metrics(loop, self.registry, len(self.planner.unneeded), unschedulable)
        candidates = candidates_by_group(loop, self.planner.unneeded)
        loop.result.status = self.status.update(
            self.registry, list(loop.groups.values()), candidates, loop.now
        )
        if self._state_restored:  # never overwrite the previous process's state before reading it
            loop.result.state = encode_state(self.registry.persisted_state())
            loop.result.templates = self._encoded_templates(self._learned_templates())
        if self.capacity is not None:
            self.capacity.finish(loop)

    def _encoded_templates(self, learned: dict[str, tuple[NodeTemplate, float]]) -> dict[str, str]:
        """``encode_templates(learned)``: the last loop's text while every group has the very same
        template and date (the provider keeps a template made from the same node and pods)."""
        kept = self._templates_encoded
        if (
            kept is not None
            and kept[0].keys() == learned.keys()
            and all(t is kept[0][gid][0] and at == kept[0][gid][1] for gid, (t, at) in learned.items())
        ):
            return kept[1]
        encoded = encode_templates(learned)
        self._templates_encoded = (learned, encoded)
        return encoded

    def _learned_templates(self) -> dict[str, tuple[NodeTemplate, float]]:
        """The template cache, each entry dated from when its content last changed, so the ConfigMap is
        written when a group's shape changes, not every loop (the cache refreshes the time each loop)."""
        out = {}
        for gid, (template, at) in self.templates.cache.items():
            previous = self._template_marks.get(gid)
            # The provider keeps a template while it is made from the same node: its mark is known.
            mark = previous[1] if previous is not None and previous[0] is template else _fingerprint(template)
            if previous is not None and previous[1] == mark:
                at = previous[2]
            self._template_marks[gid] = (template, mark, at)
            out[gid] = (template, at)
        for gid in set(self._template_marks) - set(self.templates.cache):
            del self._template_marks[gid]
        return out


def _add(counts: dict[str, int], more: Mapping[str, int]) -> None:
    for key, count in more.items():
        counts[key] = counts.get(key, 0) + count


def _fingerprint(template: NodeTemplate) -> str:
    """What a learned template says, without the DaemonSet pods' generated names."""
    data = encode_templates({"g": (template, 0.0)})
    return re.sub(r'"name":"[^"]*"', "", next(iter(data.values())))


# The scale-up results after which upstream's RunOnce returns before scale-down.
_ENDS_LOOP = frozenset({str(ScaleUpResult.SUCCESSFUL), str(ScaleUpResult.ERROR)})

_REPORTED_UNREMOVABLE = frozenset(
    str(r)
    for r in (
        UnremovableReason.BLOCKED_BY_POD,
        UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED,
        UnremovableReason.MINIMAL_RESOURCE_LIMIT_EXCEEDED,
        UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION,
        UnremovableReason.SCALE_DOWN_UNREADY_DISABLED,
        UnremovableReason.NO_PLACE_TO_MOVE_PODS,
        UnremovableReason.UNEXPECTED_ERROR,
    )
)
