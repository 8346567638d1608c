"""The scale-up decision (``ScaleUpOrchestrator.ScaleUp``, CA spec §6.1), as a plan and not an action.

:func:`expansion_options` skips groups that cannot grow (with CA's skip reasons) and asks the binpacking
estimator how many template nodes each remaining group needs. :func:`finish_scale_up` takes the
expander's choice and applies, in CA's order, the ``--max-nodes-total`` cap, the resource quotas and
the balancing across similar groups. :func:`plan_scale_up` chains the two around the expander. The
result, a :class:`ScaleUpPlan`, names every group's new size and why other groups were left out; the
loop executes ``IncreaseSize`` and registers the requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.capacity.quotas.tracker import QuotaTracker
from kubetide.cluster.clusterstate.registry import ClusterEvent
from kubetide.cluster.compat import DEFAULT_COMPATIBILITY, Compatibility
from kubetide.cluster.expander import ChainStrategy, ExpansionContext, Option
from kubetide.cluster.reasons import EventReason, ScaleUpResult, SkipReason
from kubetide.cluster.scaleup.balance import GroupSize, ScaleUpInfo, balance_scale_up
from kubetide.cluster.scaleup.limits import (
    UNKNOWN,
    GpuTarget,
    ResourceLimits,
    UnknownGpuTarget,
    cap_by_max_nodes_total,
    gpu_target,
    gpu_usage,
    node_resources,
)
from kubetide.cluster.scaleup.similar import SimilarityRules, similar_templates
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import PODS, Resources
from kubetide.scheduling.equivalence import PodGroup, group_pods
from kubetide.scheduling.estimator import estimate, schedulable_groups
from kubetide.scheduling.limiter import (
    ClusterCapacityThreshold,
    NodeGroupCapacityThreshold,
    StaticThreshold,
    ThresholdLimiter,
)
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = [
    "ClusterCount",
    "GroupState",
    "ScaleUpPlan",
    "ScaleUpSettings",
    "cluster_count",
    "expansion_options",
    "finish_scale_up",
    "plan_scale_up",
]


@dataclass(frozen=True, slots=True)
class GroupState:
    """A node group as the scale-up sees it; ``unsafe`` is the CSR's verdict (None: safe to scale)."""

    id: str
    min_size: int
    max_size: int
    target: int
    template: NodeTemplate | None
    unsafe: SkipReason | None = None
    exists: bool = True
    zero_or_max: bool = False  # ZeroOrMaxNodeScaling: the group is either empty or full
    timed_out: bool = False  # kubetide: its last failure was a scale-up that timed out
    # Its template's GPU target (limits.gpu_target) when --gpu-total limits GPUs; ``gpu_unknown``: it
    # could not be had (DeltaForNode's error: the group is skipped as not ready).
    gpu: GpuTarget | None = None
    gpu_unknown: bool = False


@dataclass(frozen=True, slots=True)
class ClusterCount:
    """What the cluster-wide limits count (``ScaleUp``): ``nodes`` is ``len(nodes) + len(upcomingNodes)``,
    the ready nodes and the upcoming ones; ``usage`` what ``ResourcesLeft`` subtracts from the maximums
    (each group's target size times its template, and the nodes of no autoscaled group)."""

    nodes: int
    usage: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class ScaleUpSettings:
    max_nodes_total: int = 0
    max_nodes_per_scaleup: int = 1000
    balance_similar_node_groups: bool = False
    similarity: SimilarityRules = field(default_factory=SimilarityRules)
    limits: ResourceLimits | None = None
    failover_to_untried_groups: bool = False  # kubetide's flag (the loop sets it; CA's way by default)
    gpu_label: str = ""  # the cloud's GPU label, for cluster_count's GPU totals
    compat: Compatibility = DEFAULT_COMPATIBILITY  # --ca-compatibility-version (the skip reasons' words)
    # A ProvisioningRequest's best-effort-atomic scale-up (``allOrNothing``): every pod or none.
    all_or_nothing: bool = False
    # The loop's CapacityQuotas (cluster.capacity.quotas), checked after the cluster-wide limits.
    quotas: QuotaTracker | None = None


@dataclass(frozen=True, slots=True)
class ScaleUpPlan:
    """The decision: ``infos`` to execute, the pods they help, and why everything else was left out."""

    result: ScaleUpResult
    infos: tuple[ScaleUpInfo, ...] = ()
    pods_triggered: tuple[Pod, ...] = ()
    skipped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    events: tuple[ClusterEvent, ...] = ()
    error: str | None = None
    atomic: bool = False  # all or nothing: each group raised by AtomicIncreaseSize


def _estimation_node(template: NodeTemplate) -> NodeView:
    """The template node with its own pods' (DaemonSets') requests taken off allocatable."""
    if not template.pods:
        return template.node
    used = Resources({PODS: len(template.pods)})
    for p in template.pods:
        used = used + p.requests
    node = template.node
    return NodeView(
        node.name,
        labels=node.labels,
        annotations=node.annotations,
        allocatable=node.allocatable - used,
        capacity=node.capacity,
        taints=node.taints,
        unschedulable=node.unschedulable,
    )


def _skip_reasons(group: GroupState, cluster: ClusterCount, settings: ScaleUpSettings) -> tuple[str, ...]:
    """Why ``group`` cannot grow now (empty: it can), in CA's order and wording."""
    if group.unsafe is not None:
        return (group.unsafe,)
    if group.template is None or group.gpu_unknown:
        return (SkipReason.NOT_READY_FOR_SCALE_UP,)
    if group.target >= group.max_size:
        return (SkipReason.MAX_SIZE_REACHED,)
    count = 1
    if group.zero_or_max:
        count = group.max_size - group.target
        if settings.max_nodes_total > 0 and cluster.nodes + count > settings.max_nodes_total:
            return (SkipReason.ATOMIC_EXCEEDS_CLUSTER_LIMIT,)
    reasons: list[str] = []
    if settings.limits is not None:
        check = settings.limits.check_quota(
            cluster.usage, node_resources(group.template.node, group.gpu), count
        )
        # IsNodeGroupResourceExceeded: any resource short for the ``count`` nodes (a ZeroOrMax group's
        # whole remaining size) skips the group.
        if check.exceeded:
            reasons.append(check.message(settings.compat.quota_skip_message))
    if settings.quotas:  # the CapacityQuotas that select the group's nodes: one reason per quota short
        reasons.extend(settings.quotas.check(group.template.node, count).messages())
    return tuple(reasons)


def _similar_groups(
    main: GroupState,
    valid: Sequence[GroupState],
    schedulable: Mapping[str, list[PodGroup]],
    settings: ScaleUpSettings,
) -> tuple[str, ...]:
    """``ComputeSimilarNodeGroups``: similar templates, and every pod group the main group could help is
    one the other could help too (``matchingSchedulablePodGroups``)."""
    if not settings.balance_similar_node_groups or main.template is None or main.zero_or_max:
        return ()
    helped = schedulable[main.id]
    out = []
    for other in valid:
        if other.id == main.id or other.template is None:
            continue
        if not similar_templates(
            main.template.node,
            main.template.pods,
            other.template.node,
            other.template.pods,
            settings.similarity,
        ):
            continue
        theirs = {id(g) for g in schedulable[other.id]}
        if all(id(g) in theirs for g in helped):
            out.append(other.id)
    return tuple(out)


def cluster_count(nodes: Sequence[NodeView], settings: ScaleUpSettings) -> ClusterCount:
    """The count of a list of nodes (callers that have no cluster state: every node counts, as a node of
    no group)."""
    limits = settings.limits
    if limits is None:
        return ClusterCount(len(nodes), {})
    usage = limits.usage(nodes)
    if limits.gpus_limited:
        try:
            usage.update(gpu_usage((gpu_target(n, settings.gpu_label, None), 1) for n in nodes))
        except UnknownGpuTarget:
            usage.update(limits.unknown_gpus())
    return ClusterCount(len(nodes), usage)


def expansion_options(
    pods: Sequence[Pod],
    groups: Sequence[GroupState],
    snapshot_nodes: Sequence[NodeView],
    settings: ScaleUpSettings,
    cluster: ClusterCount | None = None,
    snapshot: ClusterSnapshot | None = None,
) -> tuple[list[Option], dict[str, tuple[str, ...]]]:
    """One option per group that can grow and helps at least one pod, and the skip reasons of the rest.

    As CA's ``ScaleUp``: the pods are grouped once; per group, the pod groups whose sample pod fits its
    template node added to the cluster ``snapshot`` (``SchedulablePodGroups``) are estimated on that
    snapshot, so the pods already running there count for topology spread and inter-pod (anti-)
    affinity (no snapshot: an empty cluster). The snapshot is left as it was."""
    if cluster is None:
        cluster = cluster_count(snapshot_nodes, settings)
    snap = snapshot if snapshot is not None else ClusterSnapshot()
    skipped: dict[str, tuple[str, ...]] = {}
    valid = []
    for g in groups:
        reasons = _skip_reasons(g, cluster, settings)
        if reasons:
            skipped[g.id] = reasons
        else:
            valid.append(g)
    by_id = {g.id: g for g in groups}
    pod_groups = group_pods(pods)
    templates = {g.id: _estimation_node(g.template) for g in valid if g.template is not None}
    schedulable = {gid: schedulable_groups(snap, node, pod_groups) for gid, node in templates.items()}
    options = []
    for g in valid:
        assert g.template is not None
        if not schedulable[g.id]:
            continue  # it helps no pod: no option (ComputeExpansionOption returns an empty one)
        similar = _similar_groups(g, valid, schedulable, settings)
        room = [(g.max_size, g.target)] + [(by_id[s].max_size, by_id[s].target) for s in similar]
        limiter = ThresholdLimiter(
            [
                StaticThreshold(settings.max_nodes_per_scaleup, 0.0),
                NodeGroupCapacityThreshold(room),
                ClusterCapacityThreshold(settings.max_nodes_total, cluster.nodes),
            ]
        )
        est = estimate(snap, templates[g.id], schedulable[g.id], limiter)
        node_count = est.node_count
        if g.zero_or_max and node_count > 0:
            if node_count > g.max_size:
                continue  # all or nothing: more than the whole group cannot be had
            node_count = g.max_size  # an atomic group only ever goes to its max
        if settings.all_or_nothing and len(est.scheduled) < len(pods):
            continue  # prepareScaleUp: some pods would not fit, and the scale-up is all or nothing
        if node_count > 0 and est.scheduled:
            options.append(Option(g.id, node_count, est.scheduled, g.template.node, g.exists, similar))
    return options, skipped


def finish_scale_up(
    best: Option,
    groups: Sequence[GroupState],
    snapshot_nodes: Sequence[NodeView],
    settings: ScaleUpSettings,
    skipped: Mapping[str, tuple[str, ...]] | None = None,
    cluster: ClusterCount | None = None,
) -> ScaleUpPlan:
    """Caps and balancing after the expander chose ``best`` (CA spec §6.1 steps 9, 10 and 12)."""
    if cluster is None:
        cluster = cluster_count(snapshot_nodes, settings)
    skipped = dict(skipped or {})
    by_id = {g.id: g for g in groups}
    events: list[ClusterEvent] = []
    new_nodes, capped = cap_by_max_nodes_total(best.node_count, cluster.nodes, settings.max_nodes_total)
    if capped:
        events.append(
            ClusterEvent(
                "Warning",
                EventReason.MAX_NODES_TOTAL_REACHED,
                f"Max total nodes in cluster reached: {settings.max_nodes_total}",
            )
        )
    if new_nodes < 1:
        return ScaleUpPlan(
            ScaleUpResult.ERROR, (), (), skipped, tuple(events), "max node total count already reached"
        )
    main = by_id[best.group]
    usage = dict(cluster.usage)

    def per_node(g: GroupState) -> dict[str, int]:
        assert g.template is not None
        return node_resources(g.template.node, g.gpu)

    if settings.limits is not None:
        new_nodes = settings.limits.check_quota(usage, per_node(main), new_nodes).allowed
    if settings.quotas and main.template is not None:
        new_nodes = min(new_nodes, settings.quotas.check(main.template.node, new_nodes).allowed)
    if settings.all_or_nothing and new_nodes < best.node_count:
        return _abort_all_or_nothing(skipped, events)
    if new_nodes < 1:
        return ScaleUpPlan(ScaleUpResult.ERROR, (), (), skipped, tuple(events), "quota exceeded")
    members = [main] + [by_id[s] for s in best.similar_groups]
    if settings.limits is not None:
        # Similar groups that cannot take even one node within quota drop out first.
        members = [main] + [
            g for g in members[1:] if settings.limits.check_quota(usage, per_node(g), 1).allowed >= 1
        ]
    quotas = settings.quotas
    if quotas:
        members = [main] + [
            g
            for g in members[1:]
            if g.template is not None and not quotas.check(g.template.node, 1).is_exceeded
        ]
    infos = balance_scale_up([GroupSize(g.id, g.min_size, g.max_size, g.target) for g in members], new_nodes)
    if settings.limits is not None:
        # Each group's share is capped in turn; what one group loses is not given to the others.
        capped_infos = []
        for info in infos:
            allowed = settings.limits.check_quota(usage, per_node(by_id[info.group]), info.delta).allowed
            if allowed >= 1:
                capped_infos.append(
                    ScaleUpInfo(info.group, info.current_size, info.current_size + allowed, info.max_size)
                )
                for r, v in per_node(by_id[info.group]).items():
                    if usage.get(r, 0) != UNKNOWN:
                        usage = {**usage, r: usage.get(r, 0) + v * allowed}
        infos = capped_infos
    if quotas:
        infos = _cap_by_capacity_quotas(infos, by_id, quotas)
    if settings.all_or_nothing and sum(i.delta for i in infos) < new_nodes:
        return _abort_all_or_nothing(skipped, events)
    return ScaleUpPlan(
        ScaleUpResult.SUCCESSFUL,
        tuple(infos),
        best.pods,
        skipped,
        tuple(events),
        atomic=settings.all_or_nothing,
    )


def _cap_by_capacity_quotas(
    infos: Sequence[ScaleUpInfo], by_id: Mapping[str, GroupState], quotas: QuotaTracker
) -> list[ScaleUpInfo]:
    """``capScaleUpsByQuota``: each group's share cut to what its CapacityQuotas allow, taken from them in
    turn; a group cut to nothing drops out (what it loses is not given to the others)."""
    out = []
    for info in infos:
        template = by_id[info.group].template
        allowed = info.delta
        if template is not None and allowed > 0:
            allowed = quotas.check(template.node, allowed).allowed
            if allowed > 0:
                quotas.consume(template.node, allowed)
        if allowed > 0:
            out.append(ScaleUpInfo(info.group, info.current_size, info.current_size + allowed, info.max_size))
    return out


def _abort_all_or_nothing(
    skipped: Mapping[str, tuple[str, ...]], events: Sequence[ClusterEvent]
) -> ScaleUpPlan:
    """``abortAllOrNothing``: not every pod can be helped, so none is."""
    return ScaleUpPlan(ScaleUpResult.NO_OPTIONS_AVAILABLE, skipped=dict(skipped), events=tuple(events))


def _untried_first(
    options: list[Option], groups: Sequence[GroupState], skipped: dict[str, tuple[str, ...]]
) -> list[Option]:
    """kubetide (``--failover-to-untried-groups``): while a group not tried yet can take some of the
    pods, groups whose last scale-up timed out (silent stockouts, their backoff over) are left out, so
    failover walks every stuck group once before it returns to the first."""
    by_id = {g.id: g for g in groups}
    fresh = [o for o in options if not by_id[o.group].timed_out]
    if not fresh or len(fresh) == len(options):
        return options
    for o in options:
        if by_id[o.group].timed_out:
            skipped[o.group] = (SkipReason.TIMED_OUT_BEFORE,)
    return fresh


def plan_scale_up(
    pods: Sequence[Pod],
    groups: Sequence[GroupState],
    snapshot_nodes: Sequence[NodeView],
    settings: ScaleUpSettings,
    strategy: ChainStrategy,
    ctx: ExpansionContext,
    cluster: ClusterCount | None = None,
    snapshot: ClusterSnapshot | None = None,
) -> ScaleUpPlan:
    """``ScaleUp``: ``cluster`` is what the cluster-wide limits count (default: ``snapshot_nodes``);
    ``snapshot``: the loop's cluster snapshot the estimates run on (default: an empty cluster)."""
    if not pods:
        return ScaleUpPlan(ScaleUpResult.NOT_NEEDED)
    if cluster is None:
        cluster = cluster_count(snapshot_nodes, settings)
    options, skipped = expansion_options(pods, groups, snapshot_nodes, settings, cluster, snapshot)
    if settings.failover_to_untried_groups:
        options = _untried_first(options, groups, skipped)
    if not options:
        return ScaleUpPlan(ScaleUpResult.NO_OPTIONS_AVAILABLE, skipped=skipped)
    best = strategy.best_option(options, ctx)
    if best is None or best.node_count <= 0:
        return ScaleUpPlan(
            ScaleUpResult.NO_OPTIONS_AVAILABLE,
            skipped={**skipped, **{o.group: (SkipReason.FILTERED_OUT,) for o in options}},
            events=tuple(ctx.events),
        )
    plan = finish_scale_up(best, groups, snapshot_nodes, settings, skipped, cluster)
    return ScaleUpPlan(
        plan.result,
        plan.infos,
        plan.pods_triggered,
        plan.skipped,
        tuple(ctx.events) + plan.events,
        plan.error,
        plan.atomic,
    )
