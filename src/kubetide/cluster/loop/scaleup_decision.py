"""The scale-up step (CA spec §1 steps 20-26 and §6): which pending pods need new nodes, and the plan.

It filters out the pods that fit on existing or upcoming nodes (binding them in the snapshot, so the
scale-down simulation later sees them as load), drops young pods, checks ``shouldScaleUp`` (no pods,
``--max-nodes-total``, all pods too new), and asks the orchestrator for a :class:`ScaleUpPlan`. The
result is a frozen :class:`ScaleUpDecision`: the plan, or why there is none, and the events that say
so (``NotTriggerScaleUp`` reasons are computed only if the actuator ends up scaling nothing). Nothing is
executed here (:mod:`kubetide.cluster.loop.scaleup_actuator` does that).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from kubetide.cloud.instance import CloudProviderError, NodeTemplate
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.expander import ChainStrategy, ExpanderStep, ExpansionContext
from kubetide.cluster.gpu import GPU_RESOURCE
from kubetide.cluster.loop.events import CA_EVENT_OBJECT, cluster_event
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import EventReason, ScaleUpResult, SkipReason
from kubetide.cluster.scaleup.limits import ResourceLimits, UnknownGpuTarget, gpu_target, gpu_usage
from kubetide.cluster.scaleup.orchestrator import (
    ClusterCount,
    GroupState,
    ScaleUpPlan,
    ScaleUpSettings,
    plan_scale_up,
)
from kubetide.model.node import HOSTNAME_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import PODS, Resources
from kubetide.scheduling.equivalence import group_pods
from kubetide.scheduling.fit import FitChecker
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.reasons import not_trigger_scale_up_message
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = [
    "UNSCHEDULABLE_POD_TIME_BUFFER_S",
    "UPCOMING_ANNOTATION",
    "ScaleUpDecision",
    "decide_scale_up",
    "estimation_node",
    "filter_out_schedulable",
]

UNSCHEDULABLE_POD_TIME_BUFFER_S = 2.0
UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER_S = 30.0
UPCOMING_ANNOTATION = "cluster-autoscaler.k8s.io/upcoming-node"


@dataclass(frozen=True, slots=True)
class ScaleUpDecision:
    """``result`` is CA's ScaleUpResult; ``plan`` is None when the orchestrator was not asked (nothing
    to help, max nodes total, pods too new). ``events`` say why pods get no node, in emission order."""

    result: str
    plan: ScaleUpPlan | None = None
    events: tuple[CAEvent, ...] = ()
    disables_scale_down: bool = False
    pods: tuple[Pod, ...] = ()
    groups: tuple[GroupState, ...] = ()
    # The expander chain's steps: (filter, groups it kept), in order (``kubetide explain``).
    expander_trace: tuple[ExpanderStep, ...] = ()
    # What the orchestrator found while planning (a priority ConfigMap it cannot read, prices missing),
    # said before the plan is carried out.
    plan_events: tuple[CAEvent, ...] = ()

    def not_triggered(self) -> tuple[CAEvent, ...]:
        """``NotTriggerScaleUp`` for every pod, with each group's reasons: what pods are told when no
        group was scaled (none planned, or the first ``IncreaseSize`` failed). Computed on demand, as
        it runs the scheduler's filters per pod group and template."""
        if self.plan is None or self.plan.result is ScaleUpResult.ERROR or not self.pods:
            return ()
        return tuple(_not_triggered(list(self.pods), self.groups, self.plan.skipped))


def estimation_node(template: NodeTemplate, name: str) -> NodeView:
    used = Resources({PODS: len(template.pods)})
    for p in template.pods:
        used = used + p.requests
    node = template.node
    return replace(
        node,
        name=name,
        # Each upcoming node is a host of its own (CA names upcoming nodes uniquely from the template):
        # with the template's hostname, every placeholder would be one host to hostname anti-affinity
        # and topology spread, and pods one per node would never fit on the nodes already requested.
        labels={**node.labels, HOSTNAME_LABEL: name},
        annotations={**node.annotations, UPCOMING_ANNOTATION: "true"},
        allocatable=node.allocatable - used,
    )


def filter_out_schedulable(
    simulator: HintingSimulator, snapshot: ClusterSnapshot, pending: list[Pod]
) -> list[Pod]:
    """``filterOutSchedulablePodListProcessor``: the pending pods that fit on no node of the snapshot
    (upcoming placeholders included), in order of priority; those that fit are bound in it."""
    if not pending or snapshot.num_active() == 0:
        simulator.drop_old_hints()
        return sorted(pending, key=_minus_priority)
    placed = {id(p) for p in simulator.try_schedule(snapshot, pending)}
    return [p for p in sorted(pending, key=_minus_priority) if id(p) not in placed]


def _minus_priority(pod: Pod) -> int:
    return -pod.priority


def _created(pod: Pod) -> float:
    """A pod's creation time; one without is as old as can be (Go's zero time)."""
    return pod.creation_time if pod.creation_time is not None else float("-inf")


def _requests_gpu(pod: Pod) -> bool:
    """``gpu.PodRequestsGpu``: a container (not an init container) names ``nvidia.com/gpu``."""
    return any(GPU_RESOURCE in c.requests for c in pod.containers)


def _all_pods_new(pods: Sequence[Pod], now: float) -> bool:
    """``allPodsAreNew``: the oldest pod is under 2s old, or the oldest pod asking for GPUs under 30s
    (``GetOldestCreateTimeWithGpu`` starts from the present, so only GPU pods count there)."""
    if min(map(_created, pods)) + UNSCHEDULABLE_POD_TIME_BUFFER_S > now:
        return True
    gpu = [_created(p) for p in pods if _requests_gpu(p)]
    return bool(gpu) and min([now, *gpu]) + UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER_S > now


def group_states(
    view: LoopView,
    registry: ClusterStateRegistry,
    templates: Mapping[str, NodeTemplate],
    limits: ResourceLimits | None = None,
) -> list[GroupState]:
    """Each group as the orchestrator weighs it; with ``limits`` limiting GPUs, its template's GPU target
    (``DeltaForNode``)."""
    states = []
    gpus = limits is not None and limits.gpus_limited
    for gid, g in view.groups.items():
        template = templates.get(gid)
        gpu, gpu_unknown = None, False
        if gpus and template is not None:
            try:
                gpu = gpu_target(template.node, view.gpu_label, g)
            except UnknownGpuTarget:
                gpu_unknown = True
        unsafe = None
        if registry.backoff.is_backed_off(gid, view.now):
            unsafe = SkipReason.BACKOFF
        elif not registry.is_node_group_healthy(gid):
            unsafe = SkipReason.NOT_READY_FOR_SCALE_UP
        try:
            target = g.target_size()
        except CloudProviderError:
            unsafe, target = SkipReason.NOT_READY_FOR_SCALE_UP, 0
        zero_or_max = registry.group_options(gid).zero_or_max_node_scaling
        states.append(
            GroupState(
                gid,
                g.min_size(),
                g.max_size(),
                target,
                template,
                unsafe,
                g.exist(),
                zero_or_max,
                registry.timed_out_before(gid),
                gpu,
                gpu_unknown,
            )
        )
    return states


def _cluster_count(
    view: LoopView,
    registry: ClusterStateRegistry,
    templates: Mapping[str, NodeTemplate],
    ready: Sequence[NodeView],
    settings: ScaleUpSettings,
) -> ClusterCount:
    """What ``ScaleUp`` counts against the cluster-wide limits: ``len(nodes) + len(upcomingNodes)``
    (ready nodes, and ``UpcomingNodes`` from every group's template) for ``--max-nodes-total``; for the
    resource totals ``ResourcesLeft``'s usage: each group's target size times its template's capacity,
    plus the ready nodes of no autoscaled group (scale_up/resource/manager.go ``coresMemoryTotal``)."""
    counts, _ = registry.upcoming_nodes(view.now)
    upcoming = sum(n for gid, n in counts.items() if gid in templates)
    usage: dict[str, int] = {}
    limits = settings.limits
    if limits is not None:
        per_group: list[tuple[NodeView, NodeGroup, int]] = []
        for gid, group in view.groups.items():
            template = templates.get(gid)
            try:
                target = group.target_size()
            except CloudProviderError:
                continue
            if template is not None and target > 0:
                per_group.append((template.node, group, target))
        outside_nodes = [n for n in ready if view.group_of.get(n.name) is None]
        outside = Counter(n.capacity for n in outside_nodes)
        usage = limits.usage_of([*((t.capacity, k) for t, _, k in per_group), *outside.items()])
        if limits.gpus_limited:  # customResourcesTotal
            label = view.gpu_label
            try:
                usage.update(
                    gpu_usage(
                        [
                            *((gpu_target(t, label, g), k) for t, g, k in per_group),
                            *((gpu_target(n, label, None), 1) for n in outside_nodes),
                        ]
                    )
                )
            except UnknownGpuTarget:
                usage.update(limits.unknown_gpus())
    return ClusterCount(len(ready) + upcoming, usage)


def decide_scale_up(
    view: LoopView,
    to_help: list[Pod],
    options: AutoscalingOptions,
    registry: ClusterStateRegistry,
    templates: Mapping[str, NodeTemplate],
    snapshot_nodes: Sequence[NodeView],
    settings: ScaleUpSettings,
    strategy: ChainStrategy,
    snapshot: ClusterSnapshot | None = None,
    force: bool = False,
) -> ScaleUpDecision:
    """``shouldScaleUp`` then the orchestrator's plan for ``to_help`` (pods that fit nowhere, old enough),
    estimated on the loop's cluster ``snapshot``; ``force``: the orchestrator is asked whatever
    shouldScaleUp says (``ScaleUpEnforcer``: pods of a ProvisioningRequest are pending)."""
    now = view.now
    if not to_help:
        return ScaleUpDecision(str(ScaleUpResult.NOT_NEEDED))
    # ReadyNodeLister: Ready and schedulable (what ScaleUp is given as the cluster's nodes).
    ready = [n for n in view.nodes if is_node_ready(n) and not n.unschedulable]
    # ScaleUpEnforcer (``force``): the orchestrator is asked all the same; what the refused branch did
    # besides its result stays done (the Warning event; scale-down disabled for the loop).
    forced_events: tuple[CAEvent, ...] = ()
    disables_scale_down = False
    if options.max_nodes_total > 0 and len(ready) >= options.max_nodes_total:
        refused = _max_nodes_total_reached(to_help, options)
        if not force:
            return refused
        forced_events = tuple(e for e in refused.events if e.object == CA_EVENT_OBJECT)
    elif _all_pods_new(to_help, now):
        if not force:
            return ScaleUpDecision(str(ScaleUpResult.IN_COOLDOWN), disables_scale_down=True)
        disables_scale_down = True
    groups = group_states(view, registry, templates, settings.limits)
    ctx = ExpansionContext(now=now, cluster_node_count=len(view.nodes))
    cluster = _cluster_count(view, registry, templates, ready, settings)
    plan = plan_scale_up(to_help, groups, snapshot_nodes, settings, strategy, ctx, cluster, snapshot)
    return ScaleUpDecision(
        str(plan.result),
        plan,
        events=forced_events,
        disables_scale_down=disables_scale_down,
        pods=tuple(to_help),
        groups=tuple(groups),
        expander_trace=tuple(ctx.trace),
        plan_events=tuple(cluster_event(ev, view.groups, options.namespace) for ev in plan.events),
    )


def _max_nodes_total_reached(to_help: list[Pod], options: AutoscalingOptions) -> ScaleUpDecision:
    """RunOnce's answer when the ready nodes reached ``--max-nodes-total``."""
    if not options.compat.limited_by_max_nodes_total:
        # CA 1.31 RunOnce: ``scaleUpStatus.Result = ScaleUpNoOptionsAvailable``, only a log line.
        return ScaleUpDecision(str(ScaleUpResult.NO_OPTIONS_AVAILABLE))
    # CA 1.33+: ScaleUpLimitedByMaxNodesTotal, the event, and every pod in PodsRemainUnschedulable.
    msg = f"Max total nodes in cluster reached: {options.max_nodes_total}"
    events = [CAEvent("Warning", str(EventReason.MAX_NODES_TOTAL_REACHED), CA_EVENT_OBJECT, msg)]
    for p in to_help:
        events.append(
            CAEvent(
                "Normal",
                str(EventReason.NOT_TRIGGER_SCALE_UP),
                f"Pod/{p.namespace}/{p.name}",
                "max total nodes in cluster reached",
                {"reasons": {"max total nodes in cluster reached": 1}},
            )
        )
    return ScaleUpDecision(str(ScaleUpResult.LIMITED_BY_MAX_NODES_TOTAL), events=tuple(events))


def _not_triggered(
    pods: list[Pod], groups: Sequence[GroupState], skipped: Mapping[str, tuple[str, ...]]
) -> list[CAEvent]:
    out = []
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
            out.append(
                CAEvent(
                    "Normal",
                    str(EventReason.NOT_TRIGGER_SCALE_UP),
                    f"Pod/{p.namespace}/{p.name}",
                    message,
                    {
                        "reasons": dict(sorted(counts.items())),
                        "groups": {g: list(r) for g, r in per_group.items()},
                    },
                )
            )
    return out


def _predicate_reasons(pod: Pod, template: NodeTemplate) -> tuple[str, ...]:
    """Why ``pod`` does not fit an empty node of this template (the scheduler's filter reasons)."""
    snap = ClusterSnapshot([estimation_node(template, template.node.name)])
    checker = FitChecker(snap)
    facts = checker.facts(pod)
    failure = checker.diagnose(facts, np.array([0], np.intp))[0]
    return failure.reasons if failure is not None else ()
