"""The Cluster Autoscaler's main loop: ``StaticAutoscaler.RunOnce`` (CA spec §1), as a functional core
that decides, then acts.

``StaticAutoscaler(cloud, port, options).run_once(world, now)`` reads the world (a :class:`World`:
nodes, pods, PDBs, ConfigMaps, controllers) and the cloud through the cloud-provider port, and acts
through the cloud (``IncreaseSize``, ``DeleteNodes``, ``DecreaseTargetSize``) and the
:class:`~kubetide.model.api.ClusterPort` (single node taints, evictions). It reads no clock and does no
I/O; the events, counters, metrics and status of the loop are returned in a :class:`LoopResult`.

**Decide, then act.** Each stage of :mod:`kubetide.cluster.loop` that decides is a function of the
loop's read-only view (:class:`~kubetide.cluster.loop.view.LoopView`) and the autoscaler's memory,
returning a frozen phase of a :class:`LoopPlan` (housekeeping, the :class:`ScaleUpDecision` with the
expander's trace, the :class:`ScaleDownPlan`, each with its reasons); one :class:`LoopActuator`
carries the phases out through the ports and records what it did and what failed
(:class:`~kubetide.cluster.loop.outcome.LoopOutcome`). Where upstream acts between two decisions, the
loop runs in phases, each decided on the outcome of the last: housekeeping deletions and size fixes
before the scale-up decision (a size fixed ends the loop), the deletions in progress before the
snapshot, the scale-up before the scale-down (a scale-up made or failed ends the loop), the taints of
the scale-down before the first drain step of the nodes tainted (a refused taint ends the loop), the
min sizes last. The loop's whole plan is ``LoopResult.plan``; ``kubetide explain`` and the live
``/debug/plan`` read it.

To decide without acting (a shadow beside another autoscaler)::

    plan = autoscaler.decide(world, now)       # every phase, none carried out
    outcome = autoscaler.actuator.execute(plan)  # what carrying it out did and what failed

:meth:`StaticAutoscaler.decide` decides each phase after an action as if the action had been made and
changed nothing yet; the autoscaler's memory of its decisions goes on (unneeded timers, the cluster
state read from the cloud) and its memory of its actions does not (cooldown times, deletions started,
events already said), since none was made. A dry run is not this: it runs :meth:`run_once` through
ports that only say what they would write (:mod:`kubetide.live.guard`), so it remembers what it would
have done, as a real run would.

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

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from kubetide.cloud.instance import CloudProviderError, InstanceState, NodeTemplate, NotImplementedByProvider
from kubetide.cloud.provider import CloudProvider, PricingModel
from kubetide.cluster.capacity.stage import CapacityStage
from kubetide.cluster.clusterstate.learned_templates import (
    TEMPLATES_CONFIG_MAP,
    decode_templates,
    encode_templates,
)
from kubetide.cluster.clusterstate.persisted import STATE_CONFIG_MAP, decode_state, encode_state
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.expander import ChainStrategy, ExpanderDependencies, build_strategy
from kubetide.cluster.expander.priority import CONFIG_MAP_NAME
from kubetide.cluster.loop import housekeeping
from kubetide.cluster.loop.actuator import LoopActuator
from kubetide.cluster.loop.deletions import (
    Deletion,
    DrainSettings,
    deletions_in_progress,
    plan_step,
    tainted_view,
)
from kubetide.cluster.loop.events import CA_EVENT_OBJECT, Recorder
from kubetide.cluster.loop.outcome import LoopOutcome
from kubetide.cluster.loop.plan import (
    ClusterStateFindings,
    DrainRound,
    FailedInstanceRemovals,
    LoopPlan,
    MinSizeRaises,
    Notices,
    PartialDeliveryRemovals,
    Phase,
    SizeFixes,
    TaintRemovals,
    UnregisteredRemovals,
)
from kubetide.cluster.loop.report import candidates_by_group, loop_metrics
from kubetide.cluster.loop.result import LoopMetrics, LoopResult
from kubetide.cluster.loop.scaledown_plan import ScaleDownPlan, ScaleDownPlanner
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision, decide_scale_up
from kubetide.cluster.loop.snapshot import build_snapshot
from kubetide.cluster.loop.start import start_loop
from kubetide.cluster.loop.templates import TemplateProvider, daemonset_exemplars
from kubetide.cluster.loop.timing import FunctionLabel, FunctionTimer, Stopwatch
from kubetide.cluster.loop.unremovable import unremovable_notices
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.loop.world import CAEvent, LoopStats, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import EventReason, KubetideEventReason, ScaleDownResult, ScaleUpResult
from kubetide.cluster.scaledown.cooldown import ScaleDownTimes
from kubetide.cluster.scaledown.unneeded import UnneededNode
from kubetide.cluster.scaleup.limits import ResourceLimits
from kubetide.cluster.scaleup.orchestrator import ScaleUpSettings
from kubetide.cluster.scaleup.similar import BASIC_IGNORED_LABELS, PROVIDER_IGNORED_LABELS, SimilarityRules
from kubetide.cluster.status import StatusTracker
from kubetide.cluster.taintconfig import TaintConfig
from kubetide.model.api import ClusterPort
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import DrainContext, DrainOptions
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.kept import SnapshotKeeper
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = [
    "CAEvent",
    "LoopActuator",
    "LoopMetrics",
    "LoopPlan",
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


@dataclass
class _Loop:
    """One loop being run: its view (a new one when an action changes what it sees), the plan decided so
    far, and, when acting, the result being written and everything done so far (``done``)."""

    view: LoopView
    plan: LoopPlan
    result: LoopResult
    timer: FunctionTimer
    acting: bool
    done: LoopOutcome = field(default_factory=LoopOutcome)

    def __post_init__(self) -> None:
        self.result.stats = self.done.stats  # the loop's counters are what it did

    def stop(self, why: str, error: str | None = None) -> None:
        self.plan = self.plan.stop(why)
        if error is not None:
            self.result.error = error


class StaticAutoscaler:
    """One CA process: the state kept between loops (cluster state, templates cache, scale-down planner,
    cooldown times, event deduplication, last status), the actuator, and :meth:`run_once`, the stages
    in order. A restart is a new instance; what must survive it lives in the cluster and the cloud."""

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
        self.recorder = Recorder(o.record_duplicated_events)
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
        # The one actuator: it carries the plans out through the ports and keeps the drains in progress.
        self.actuator = LoopActuator(port, self.registry, self.drain_settings)
        self._deleted: set[str] = set()  # the nodes whose DeleteNodes this process called, never called twice
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
        if self.capacity is not None:
            registry = self.registry
            self.capacity.provision_time = lambda g: registry.group_options(g).max_node_provision_time
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
        """One loop: each phase decided, then carried out by the actuator, the next decided on its
        outcome. The plan is ``result.plan``."""
        world = self._scheduled_by_allowed(world)
        result = LoopResult()
        timer = FunctionTimer(self.stopwatch, result.function_durations)  # updateClusterState starts here
        self._world = world
        try:
            loop = self._start(world, now, result, timer, acting=True)
            if loop is None:
                return result
            # Deferred to the end of the loop whatever happens, as upstream writes its status (§1 step 15).
            unschedulable = self._run(loop)
            self._finish(loop, unschedulable)
            return result
        finally:
            self._world = None  # read during the loop only; a source may then reuse what it showed

    def decide(self, world: World, now: float) -> LoopPlan:
        """The loop's plan at ``now``, nothing of it carried out: each phase after an action is decided as
        if the action had been made (the cloud and the cluster as they are). What the autoscaler
        remembers of its decisions goes on (unneeded timers, the cluster state read from the cloud);
        what it remembers of its actions does not (cooldown times, deletions started), as none was
        made. :attr:`actuator` carries a plan out (``actuator.execute(plan)``)."""
        world = self._scheduled_by_allowed(world)
        self._world = world
        try:
            loop = self._start(world, now, LoopResult(), FunctionTimer(), acting=False)
            if loop is None:
                return LoopPlan(now, stopped="the loop could not start")
            self._run(loop)
            return loop.plan
        finally:
            self._world = None

    def _scheduled_by_allowed(self, world: World) -> World:
        allowed = self.options.allowed_scheduler_names
        if not allowed:
            return world
        # Upstream's listPods: with --allowed-scheduler-names, pods of other schedulers (scheduled or
        # not) are left out of the loop's pod list altogether.
        kept = frozenset(allowed)
        pods = [p for p in world.pods if p.scheduler_name in kept]
        return replace(world, pods=pods, pods_by_node=None, unbound_pods=None)

    def _start(
        self, world: World, now: float, result: LoopResult, timer: FunctionTimer, *, acting: bool
    ) -> _Loop | None:
        started = start_loop(self.cloud, world, now, self.taints, timer)
        if started.view is None:
            result.error = started.error
            return None
        loop = _Loop(started.view, LoopPlan(now, groups=started.view.groups), result, timer, acting)
        if started.notices is not None:
            self._carry_out(loop, started.notices)
        return loop

    def _carry_out(self, loop: _Loop, *phases: Phase) -> LoopOutcome:
        """Add ``phases`` to the loop's plan and, when acting, have the actuator carry them out: its
        events are recorded (as client-go's recorder keeps them) and its counts added to the loop's.
        When deciding only, the outcome is every action made."""
        loop.plan = loop.plan.then(*phases)
        if not loop.acting:
            return _assumed(phases, loop.view.now, self.drain_settings.cordon)
        outcome = self.actuator.execute(loop.plan.only(*phases))
        loop.result.events += self.recorder.keep(outcome.events, loop.view.now)
        loop.done.add(outcome)
        loop.result.deletions_due_at = loop.done.deletions_due_at
        return outcome

    def _housekeeping(self, loop: _Loop) -> Mapping[str, NodeTemplate] | None:
        """Up to the deletions in progress: the start's cleanup, the templates, the cluster state and
        its findings, the instances to delete, the sizes to fix; the groups' templates, or None when
        the loop ends there."""
        o = self.options
        if not o.scale_up_from_zero and not any(is_node_ready(n) for n in loop.view.nodes):
            loop.stop("no ready nodes", "no ready nodes: the loop is skipped (--scale-up-from-zero=false)")
            return None
        if self.first_loop:
            self._restore_state(loop.view)
            self._clean_up_at_start(loop)
        templates = self._templates(loop)
        if not self._update_cluster_state(loop):
            return None
        self._carry_out_some(loop, housekeeping.unregistered_removals(loop.view, self.registry, o))
        if not self.registry.is_cluster_healthy():
            self.planner.unneeded = {}
            unhealthy = CAEvent(
                "Warning", str(EventReason.CLUSTER_UNHEALTHY), CA_EVENT_OBJECT, "Cluster is unhealthy"
            )
            self._carry_out(loop, Notices("cluster health", (unhealthy,)))
            loop.result.scale_up_result = "ClusterUnhealthy"
            loop.stop("the cluster is unhealthy")
            return None
        self._carry_out_some(loop, housekeeping.failed_instance_removals(loop.view, self.registry, o))
        if self._carry_out_some(loop, housekeeping.size_fixes(loop.view, self.registry)).size_fixed:
            loop.stop("a node group's size was fixed")
            return None
        return templates

    def _run(self, loop: _Loop) -> int:
        """The stages in upstream's order; returns the unschedulable pods count (for the metrics)."""
        now, o = loop.view.now, self.options
        templates = self._housekeeping(loop)
        if templates is None:
            return 0
        deletions = self._deletions_in_progress(loop)
        drain_ctx = DrainContext(
            now, self.drain_options, tuple(loop.view.world.pdbs), loop.view.world.controllers
        )
        if deletions:
            deleting = self._deleting_in_cloud
            self._carry_out(loop, self._drain_round(loop.view, deletions, drain_ctx, deleting, started=False))
        capacity = self.capacity
        if capacity is not None:
            self._carry_out_notices(loop, "capacity objects", capacity.begin(loop.view))
            self._carry_out_some(loop, capacity.partial_removals())
        snap = build_snapshot(
            loop.view, self.registry, templates, o, self._hinting, self._snapshots, loop.timer, capacity
        )
        if capacity is not None:
            self._carry_out_notices(loop, "provisioning requests' pods", capacity.take_notices())
        to_help = list(snap.to_help)
        decision = self._scale_up(
            loop, to_help, templates, [*snap.all_nodes, *snap.placeholders], snap.snapshot
        )
        if decision.plan is not None and loop.result.scale_up_result in _ENDS_LOOP:
            # static_autoscaler.go RunOnce, postScaleUp: a scale-up that succeeded (or failed with an
            # error) ends the loop: no unneeded nodes, no soft taints, no scale-down, no min sizes.
            if loop.result.scale_up_result == ScaleUpResult.SUCCESSFUL:
                loop.result.scale_down_result = str(ScaleDownResult.IN_COOLDOWN)
            self._back_off_failed_deletions(loop)
            loop.stop(f"scale-up: {loop.result.scale_up_result}")
            return len(to_help)
        if o.scale_down_enabled:
            if capacity is not None:
                self.planner.quota_minimums = capacity.min_quotas(loop.view, snap.snapshot)
            unneeded_started = loop.timer.start()
            plan = self.planner.plan(
                loop.view,
                self.registry,
                snap.snapshot,
                list(snap.all_nodes),
                drain_ctx,
                deletions,
                self.times,
                decision.disables_scale_down,
            )
            loop.timer.observe(FunctionLabel.FIND_UNNEEDED, unneeded_started)
            if not self._scale_down(loop, plan, drain_ctx):
                return len(to_help)
        self._report_unremovable(loop)
        self._back_off_failed_deletions(loop)
        if o.enforce_node_group_min_size:
            raised = self._carry_out(
                loop, housekeeping.min_size_raises(loop.view, self.registry, o)
            ).raised_to_min
            if raised and loop.acting:
                self.times = replace(self.times, last_scale_up=now)  # postScaleUp: lastScaleUpTime
        return len(to_help)

    def _carry_out_notices(self, loop: _Loop, about: str, events: tuple[CAEvent, ...]) -> None:
        """Events a decision says (the capacity APIs'), when there are any."""
        if events:
            self._carry_out(loop, Notices(about, events))

    def _carry_out_some(
        self,
        loop: _Loop,
        phase: ClusterStateFindings
        | UnregisteredRemovals
        | FailedInstanceRemovals
        | PartialDeliveryRemovals
        | SizeFixes,
    ) -> LoopOutcome:
        """:meth:`_carry_out` of a housekeeping phase that may have nothing to do (then not in the plan)."""
        if phase == type(phase)():
            return LoopOutcome()
        return self._carry_out(loop, phase)

    def _clean_up_at_start(self, loop: _Loop) -> None:
        """The first loop: stale taints removed, unneeded timers back from the soft taints."""
        stale = housekeeping.stale_taint_removals(loop.view)
        if stale.removals:
            self._untainted(loop, self._carry_out(loop, stale))
        soft = housekeeping.soft_taint_cleanup(loop.view, self.options)
        self.planner.unneeded.update(soft.restored)
        if soft.removals or soft.restored:
            self._untainted(loop, self._carry_out(loop, soft))

    @staticmethod
    def _untainted(loop: _Loop, outcome: LoopOutcome) -> None:
        """The loop's view of the nodes whose taint was removed."""
        removed = outcome.untainted
        if removed:
            loop.view = loop.view.with_nodes(
                [
                    replace(n, taints=tuple(t for t in n.taints if t.key != removed[n.name]))
                    if n.name in removed
                    else n
                    for n in loop.view.nodes
                ]
            )

    def _templates(self, loop: _Loop) -> Mapping[str, NodeTemplate]:
        view = loop.view
        templates, mismatches = self.templates.compute(
            list(view.groups.values()),
            list(view.nodes),
            view.group_of,
            view.pods_by_node,
            view.now,
            lambda: daemonset_exemplars(view.world.pods, view.world.daemonsets),
        )
        events = tuple(
            CAEvent(
                "Warning",
                str(KubetideEventReason.NODE_TEMPLATE_MISMATCH),
                f"NodeGroup/{m.group}",
                f"node group {m.group}: {m.resource} differs: the provider's template has {m.template}, "
                f"its nodes have {m.observed}; using the real nodes",
                {"group": m.group, "resource": m.resource, "template": m.template, "observed": m.observed},
            )
            for m in mismatches
        )
        if events:
            self._carry_out(loop, Notices("node templates", events))
        return templates

    def _update_cluster_state(self, loop: _Loop) -> bool:
        """The cluster state read from the cloud and the nodes, its findings carried out; False when it
        could not be read (the loop ends)."""
        view = loop.view
        try:
            # The groups just looked up serve again; after a failed lookup the registry asks itself
            # (and its update fails, as upstream's).
            update = self.registry.update_nodes(
                view.nodes, view.now, view.group_of if view.groups_known else None
            )
        except CloudProviderError as exc:
            self.planner.unneeded = {}
            loop.stop("the cluster state could not be read", f"failed to update cluster state: {exc}")
            return False
        findings = housekeeping.cluster_state_findings(view, update, self.registry, self.options.namespace)
        if self.capacity is not None and findings.failed_scale_ups:
            self.capacity.note_failed_scale_ups([g for g, _ in findings.failed_scale_ups], view.now)
        if loop.acting:
            for revert in findings.reverts:  # fixNodeGroupSize must not decrease it again
                self.registry.forget_incorrect_size(revert.group)
        self._carry_out_some(loop, findings)
        loop.timer.observe(FunctionLabel.UPDATE_STATE, loop.timer.loop_started)
        self.first_loop = False
        return True

    def _scale_up(
        self,
        loop: _Loop,
        to_help: list[Pod],
        templates: Mapping[str, NodeTemplate],
        nodes: list[NodeView],
        snapshot: ClusterSnapshot,
    ) -> ScaleUpDecision:
        started = loop.timer.start()
        o = self.options

        def decide(pods: list[Pod], settings: ScaleUpSettings, force: bool = False) -> ScaleUpDecision:
            return decide_scale_up(
                loop.view, pods, o, self.registry, templates, nodes, settings, self.strategy, snapshot, force
            )

        capacity = self.capacity
        if capacity is None:
            decision = decide(to_help, self.settings)
        else:
            decision = capacity.decide_scale_up(
                loop.view, loop.timer, to_help, self.settings, snapshot, nodes, decide
            )
        loop.result.scale_up = decision
        loop.result.scale_up_result = decision.result
        outcome = self._carry_out(loop, decision)
        if outcome.scale_up_failed:
            loop.result.scale_up_result = str(ScaleUpResult.ERROR)
        scaled = bool(outcome.scaled_up)
        if capacity is not None:
            events = capacity.after_scale_up(loop.view, loop.result, decision, outcome)
            self._carry_out_notices(loop, "capacity buffers", events)
            # A check-capacity answer is a successful scale-up that raised no group (lastScaleUpTime).
            answered = decision.plan is not None and not decision.plan.infos
            scaled = scaled or (answered and loop.result.scale_up_result == ScaleUpResult.SUCCESSFUL)
        if scaled and loop.acting:
            self.times = replace(self.times, last_scale_up=loop.view.now)
        if decision.plan is not None:  # CA times the orchestrator only in a loop that asks it
            loop.timer.observe(FunctionLabel.SCALE_UP, started)
        return decision

    def _scale_down(self, loop: _Loop, plan: ScaleDownPlan, drain_ctx: DrainContext) -> bool:
        """Carry the plan out, then the first drain step of the deletions it started; False when a taint
        was refused (RunOnce: StartDeletion's error ends the loop, before --enforce-node-group-min-size)."""
        result, now = loop.result, loop.view.now
        started_at = loop.timer.start()
        result.unneeded = dict(plan.unneeded)
        result.unremovable.update(plan.unremovable)
        result.blocking_pods.update(plan.blocking)
        result.not_candidates.update(plan.not_candidates)
        outcome = self._carry_out(loop, plan)
        started = [(node, plan.delete[i]) for node, i in outcome.started]
        result.deletions_started = tuple(item.node.name for _, item in started)
        if started:
            deletions = [
                Deletion(node, loop.view.groups[item.group], now, drain=not item.empty, atomic=item.atomic)
                for node, item in started
            ]
            self._carry_out(
                loop, self._drain_round(loop.view, deletions, drain_ctx, lambda n: False, started=True)
            )
        if plan.result is not ScaleDownResult.NODE_DELETE_STARTED:
            result.scale_down_result = str(plan.result)
        elif outcome.taint_failed:
            result.scale_down_result = str(ScaleDownResult.ERROR)
        else:
            result.scale_down_result = str(
                ScaleDownResult.NODE_DELETE_STARTED if started else ScaleDownResult.NO_NODE_DELETED
            )
        if plan.result is not ScaleDownResult.IN_COOLDOWN:
            loop.timer.observe(FunctionLabel.SCALE_DOWN, started_at)
        if not loop.acting:
            return True
        self.planner.forget([item.node.name for _, item in started])
        for _, item in started:
            self._tainted_at[item.node.name] = now
        if result.scale_down_result == ScaleDownResult.NODE_DELETE_STARTED:
            self.times = replace(self.times, last_scale_down_delete=now)
        elif result.scale_down_result == ScaleDownResult.ERROR:
            # RunOnce: StartDeletion's error (a taint refused) sets lastScaleDownFailTime and ends the
            # loop with it, before --enforce-node-group-min-size.
            self.times = replace(self.times, last_scale_down_fail=now)
            loop.stop(
                "a node's ToBeDeleted taint was refused",
                "failed to scale down: couldn't taint a node with ToBeDeleted",
            )
            self._report_unremovable(loop)
            self._back_off_failed_deletions(loop)
            return False
        return True

    def _drain_round(
        self,
        view: LoopView,
        deletions: list[Deletion],
        drain_ctx: DrainContext,
        deleting_in_cloud: Callable[[NodeView], bool],
        *,
        started: bool,
    ) -> DrainRound:
        """One step of each deletion, decided from its drain's state (the actuator's)."""
        drains = self.actuator.drains
        steps = tuple(
            plan_step(
                d,
                drains.get(d.node.name),
                view.pods_by_node,
                drain_ctx,
                self.drain_settings,
                view.now,
                deleting_in_cloud(d.node),
            )
            for d in deletions
        )
        return DrainRound(steps, started)

    def _report_unremovable(self, loop: _Loop) -> None:
        """kubetide's ``UnremovableNode`` events (:mod:`kubetide.cluster.loop.unremovable`)."""
        result = loop.result
        notices, said = unremovable_notices(
            self._unremovable_said, result.unremovable, result.blocking_pods, loop.view.group_of
        )
        if loop.acting:
            self._unremovable_said = said
        if notices is not None:
            self._carry_out(loop, notices)

    def _back_off_failed_deletions(self, loop: _Loop) -> None:
        """A deletion that failed (drain timed out or aborted, ``DeleteNodes`` refused), in a drain started
        this loop or resumed: scale-down waits ``--scale-down-delay-after-failure`` and the node is not a
        candidate again for ``--unremovable-node-recheck-timeout``. Upstream's asynchronous deletions do
        neither (only a failed taint sets the failure time), so a failing ``DeleteNodes`` was retried,
        with a fresh drain, as soon as the node was unneeded again."""
        failed = loop.done.failed_deletions
        if not failed:
            return
        now = loop.view.now
        for name in failed:  # abandoned and untainted: no longer a deletion of ours
            self._tainted_at.pop(name, None)
        self.times = replace(self.times, last_scale_down_fail=now)
        until = now + self.options.unremovable_node_recheck_timeout
        for name in failed:
            self.planner.recently_unremovable[name] = until

    # -- state kept across restarts ------------------------------------------------------------------
    def _restore_state(self, view: LoopView) -> None:
        key = f"{self.options.namespace}/{STATE_CONFIG_MAP}"
        state = decode_state(view.world.config_maps.get(key))
        if state is not None:
            self.registry.restore(state)
        learned = decode_templates(
            view.world.config_maps.get(f"{self.options.namespace}/{TEMPLATES_CONFIG_MAP}")
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
        (for a caller that does not count them itself). The round's plan is ``result.plan``."""
        result = LoopResult()
        loop = self._start(world, now, result, FunctionTimer(), acting=True)
        if loop is None:
            return result
        deletions = self._deletions_in_progress(loop)
        if deletions:
            drain_ctx = DrainContext(now, self.drain_options, tuple(world.pdbs), world.controllers)
            # The cluster state was read by the last loop: ask the cloud now, so a node deleted since (by
            # this process's last round, or by the process before a restart) is not deleted and counted again.
            deleting = self._deleting_in_cloud_now(loop.view)
            self._carry_out(loop, self._drain_round(loop.view, deletions, drain_ctx, deleting, started=False))
        self._deleted.update(loop.done.deleted)
        self._back_off_failed_deletions(loop)
        # Counted by the next loop's metrics (its counters' increments), as upstream's goroutine counts
        # into the same Prometheus counters the loop reports.
        result.deleted_between_loops = dict(loop.done.scaled_down)
        result.evicted_between_loops = dict(loop.done.evictions)
        if carry:
            _add(self._carried.scaled_down, loop.done.scaled_down)
            _add(self._carried.evictions, loop.done.evictions)
        self._carried.api_errors += loop.done.api_errors
        result.plan = loop.plan
        result.failures = tuple(loop.done.failures)
        result.nodes_deleted = tuple(loop.done.deleted)
        return result

    # -- deletions in progress (derived from taints) ------------------------------------------------
    def _deletions_in_progress(self, loop: _Loop) -> list[Deletion]:
        view = loop.view
        out = deletions_in_progress(
            view,
            self._tainted_at,
            self.actuator.drains,
            self.planner.started_as_drain,
            lambda gid: self.registry.group_options(gid).zero_or_max_node_scaling,
        )
        if not loop.acting:
            return out
        if self._tainted_at or self._deleted:
            present = {n.name for n in view.nodes}
            for name in [n for n in self._tainted_at if n not in present]:
                del self._tainted_at[name]
            self._deleted &= present
        self.actuator.keep_drains({d.node.name for d in out})
        return out

    def _deleting_in_cloud(self, node: NodeView) -> bool:
        return (
            node.name in self._deleted
            or self.registry.instance_state(node.provider_id) is InstanceState.Deleting
        )

    def _deleting_in_cloud_now(self, view: LoopView) -> Callable[[NodeView], bool]:
        """:meth:`_deleting_in_cloud` from the cloud's instances as they are now (each group's read once,
        when a deletion of it comes up): an instance Deleting, or no longer in its group, is not
        deleted again. A group whose instances cannot be read falls back to the last loop's view."""
        states: dict[str, dict[str, InstanceState | None] | None] = {}

        def deleting(node: NodeView) -> bool:
            gid = view.group_of.get(node.name)
            if node.name in self._deleted or gid is None or not node.provider_id:
                return self._deleting_in_cloud(node)
            if gid not in states:
                try:
                    instances = view.groups[gid].nodes()
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
    def _finish(self, loop: _Loop, unschedulable: int) -> None:
        view, result, done = loop.view, loop.result, loop.done
        self._deleted.update(done.deleted)
        _add(done.scaled_down, self._carried.scaled_down)
        _add(done.evictions, self._carried.evictions)
        done.api_errors += self._carried.api_errors
        self._carried = _Carried()
        result.metrics = loop_metrics(view, done, self.registry, len(self.planner.unneeded), unschedulable)
        candidates = candidates_by_group(view, self.planner.unneeded)
        result.status = self.status.update(self.registry, list(view.groups.values()), candidates, view.now)
        if self._state_restored:  # never overwrite the previous process's state before reading it
            result.state = encode_state(self.registry.persisted_state())
            result.templates = self._encoded_templates(self._learned_templates())
        result.plan = loop.plan
        result.failures = tuple(done.failures)
        result.nodes_deleted = tuple(done.deleted)
        if self.capacity is not None:
            self.capacity.finish(view, result)

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


def _assumed(phases: tuple[Phase, ...], now: float, cordon: bool) -> LoopOutcome:
    """What carrying ``phases`` out would do if every action were made (deciding without acting)."""
    out = LoopOutcome()
    for phase in phases:
        if isinstance(phase, TaintRemovals):
            out.untainted.update((r.node, r.key) for r in phase.removals)
        elif isinstance(phase, SizeFixes):
            out.size_fixed += [f.group for f in phase.fixes]
        elif isinstance(phase, ScaleUpDecision) and phase.plan is not None:
            out.scaled_up += phase.plan.infos
        elif isinstance(phase, ScaleDownPlan) and phase.result is ScaleDownResult.NODE_DELETE_STARTED:
            out.started += [(tainted_view(item.node, now, cordon), i) for i, item in enumerate(phase.delete)]
        elif isinstance(phase, MinSizeRaises):
            out.raised_to_min += [r.group for r in phase.raises]
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
