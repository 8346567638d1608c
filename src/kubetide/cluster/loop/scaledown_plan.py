"""The scale-down step (CA spec §7): which nodes are unneeded, which of them go now, and the soft taints,
as one frozen :class:`ScaleDownPlan` (Karpenter's "decide, then act").

:class:`ScaleDownPlanner` keeps what upstream's planner keeps between loops (the unneeded timers and the
recently-unremovable nodes) and, each loop, runs eligibility, the removal simulation, the unneeded
tracking, the cooldown, the removable check and the budgets. The plan says, per node to delete, its
group, whether it is empty or drained, why it is unneeded and where each pod goes per the simulation;
and which soft taints to add or remove. It changes nothing in the cluster or the cloud:
:mod:`kubetide.cluster.loop.scaledown_actuator` executes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.loop.context import LoopContext
from kubetide.cluster.loop.deletions import Deletion, scale_down_reason
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import ScaleDownResult, UnremovableReason
from kubetide.cluster.scaledown.budgets import Budget, crop_nodes, group_nodes
from kubetide.cluster.scaledown.candidates import CandidateOrder
from kubetide.cluster.scaledown.cooldown import ScaleDownTimes, scale_down_in_cooldown
from kubetide.cluster.scaledown.eligibility import EligibilityInput, EligibilityMemo, filter_out_unremovable
from kubetide.cluster.scaledown.limits import limits_left, try_decrement
from kubetide.cluster.scaledown.pdb import PdbCoverage, RemainingPdbs
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT, TO_BE_DELETED_TAINT, is_being_deleted
from kubetide.cluster.scaledown.unneeded import GroupSizes, UnneededNode, removable_at, update_unneeded
from kubetide.cluster.scaleup.limits import (
    GpuTarget,
    ResourceLimits,
    UnknownGpuTarget,
    gpu_target,
    gpu_usage,
    node_resources,
)
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import DrainContext, DrainMemo, NodeDrain, drain_node
from kubetide.scheduling.removal_simulation import RemovalMemo, RemovalResult, must_move, simulate_removals
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.scheduling.utilization import UtilizationMemo

__all__ = ["NodeToDelete", "ScaleDownPlan", "ScaleDownPlanner", "must_move_now"]

MinimumCheck = Callable[[NodeView], UnremovableReason | None]


def must_move_now(pod: Pod) -> bool:
    return pod.phase not in ("Succeeded", "Failed") and must_move(pod)


@dataclass(frozen=True, slots=True)
class NodeToDelete:
    """One node the plan deletes: ``empty`` nodes are deleted at once, others drained first.

    ``reason`` is CA's scale-down reason (empty, underutilized, unready); ``moves`` is where each pod
    (``namespace/name``) goes per the removal simulation; ``utilization`` is the event's text.
    """

    node: NodeView
    group: str
    empty: bool
    reason: str
    since: float
    moves: tuple[tuple[str, str], ...] = ()
    pods_to_reschedule: tuple[str, ...] = ()
    utilization: str = "{}"
    atomic: bool = False  # its group is ZeroOrMax: deleted with the group's other nodes, in one call


@dataclass(frozen=True, slots=True)
class ScaleDownPlan:
    """The scale-down decision of one loop. ``result`` is CA's ScaleDownResult should every deletion
    start; ``soft_taints_add`` are ``DeletionCandidateOfClusterAutoscaler`` taints to add (node, taint),
    ``soft_taints_remove`` nodes to clear; ``unneeded`` (node -> since) and ``unremovable`` (node ->
    reason) explain the rest; ``no_longer_unneeded`` lost their timer this loop."""

    result: ScaleDownResult
    delete: tuple[NodeToDelete, ...] = ()
    soft_taints_add: tuple[tuple[str, Taint], ...] = ()
    soft_taints_remove: tuple[str, ...] = ()
    unneeded: Mapping[str, float] = field(default_factory=dict)
    unremovable: Mapping[str, str] = field(default_factory=dict)
    no_longer_unneeded: tuple[str, ...] = ()
    # For nodes a pod blocks (``BlockedByPod``): the pod (``namespace/name``) and the drain rule's reason.
    blocking: Mapping[str, tuple[str, str]] = field(default_factory=dict)


def _with_remaining_pdbs(
    drain: Callable[[Sequence[Pod]], NodeDrain], ctx: DrainContext, pdbs: RemainingPdbs
) -> Callable[[Sequence[Pod]], NodeDrain]:
    """``drain``, but for nodes with a pod a PDB covers whose disruptions this loop's removals spent:
    those are judged with the disruptions left (GetPodsToMove with the RemainingPdbTracker)."""

    def judged(pods: Sequence[Pod]) -> NodeDrain:
        if pdbs.exhausted and pdbs.affects(pods):
            return drain_node(pods, replace(ctx, pdbs=pdbs.remaining()))
        return drain(pods)

    return judged


def _whole_atomic_groups(
    empty: list[tuple[str, str]],
    drain: list[tuple[str, str]],
    atomic: frozenset[str],
    targets: Mapping[str, int],
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``AtomicResizeFilteringProcessor``: an atomic (ZeroOrMax) group's removable nodes go only if
    they are as many as its target size, and after the other groups' nodes."""
    count: dict[str, int] = {}
    for _, g in empty + drain:
        if g in atomic:
            count[g] = count.get(g, 0) + 1
    whole = {g for g, n in count.items() if targets.get(g) == n}
    return (
        [p for p in empty if p[1] not in atomic] + [p for p in empty if p[1] in whole],
        [p for p in drain if p[1] not in atomic] + [p for p in drain if p[1] in whole],
    )


def _moves(removal: RemovalResult | None) -> tuple[tuple[str, str], ...]:
    """(pod ``namespace/name``, destination node) per pod the removal simulation moved."""
    if removal is None:
        return ()
    return tuple((p.key, dest) for dest, pods in removal.moves for p in pods)


class ScaleDownPlanner:
    """Upstream's planner state: unneeded timers and nodes not re-simulated for a while."""

    def __init__(self, options: AutoscalingOptions, limits: ResourceLimits) -> None:
        self.options = options
        self.limits = limits
        self.unneeded: dict[str, UnneededNode] = {}
        self.recently_unremovable: dict[str, float] = {}
        # Upstream's planner: when it last updated, and the shortest interval between two updates
        # seen so far (starting at the unneeded time), for the limit on the nodes it simulates.
        self.latest_update: float | None = None
        self.min_update_interval = options.scale_down_unneeded_time or 1e-9
        # Unneeded nodes whose deletion started since the last plan: upstream keeps them in its
        # unneeded list until the next update, so they still count toward that limit.
        self._deleting_unneeded = 0
        self._utilization = UtilizationMemo()
        self._eligibility = EligibilityMemo()
        self._removals = RemovalMemo()  # removal attempts that repeat exactly are replayed
        self._drains = DrainMemo()  # and drain answers that would be the same
        self._pdb_coverage = PdbCoverage()  # which PDBs cover each pod
        self._order = CandidateOrder()  # each node's emptiness, for the candidates' order
        # ``PreviousCandidates``: the nodes unneeded after the last update (not cleared with the
        # unneeded timers when the cluster is unhealthy, nor when a deletion starts).
        self.previous_candidates: frozenset[str] = frozenset()
        # Whether each deletion this planner started was a drain (the deletion tracker's two lists).
        self._started_drained: dict[str, bool] = {}
        # Set by the loop before each plan: more minimums than --cores-total's (the CapacityQuotas'), as a
        # wrapper of the cluster-wide check (cluster.capacity); None: none.
        self.quota_minimums: Callable[[MinimumCheck], MinimumCheck] | None = None

    def started_as_drain(self, name: str, pods: Sequence[Pod]) -> bool:
        """Whether the deletion of ``name`` was started as a drain (the deletion tracker's lists); one this
        planner did not start (resumed from its taint) is a drain while it has pods to move."""
        drained = self._started_drained.get(name)
        if drained is None:
            drained = any(must_move_now(p) for p in pods)
        return drained

    def forget(self, names: Sequence[str]) -> None:
        for name in names:
            if self.unneeded.pop(name, None) is not None:
                self._deleting_unneeded += 1

    def unneeded_limit(self) -> int:
        """``unneededNodesLimit``: how many removable nodes a loop looks for before it stops simulating:
        ``min(unneeded + 2N, N x floor(max(U, I) / I) + N)`` with N = ``--max-scale-down-parallelism``,
        U the default unneeded time and I the shortest interval between updates (integer nanoseconds,
        as Go's durations)."""
        n = self.options.max_scale_down_parallelism
        limit = len(self.unneeded) + self._deleting_unneeded + 2 * n
        interval = max(round(self.min_update_interval * 1e9), 1)
        unneeded_time = max(round(self.options.scale_down_unneeded_time * 1e9), interval)
        return min(n * (unneeded_time // interval) + n, limit)

    def plan(
        self,
        loop: LoopContext,
        registry: ClusterStateRegistry,
        snapshot: ClusterSnapshot,
        all_nodes: Sequence[NodeView],
        drain_ctx: DrainContext,
        deletions: Sequence[Deletion],
        times: ScaleDownTimes,
        disabled: bool,
    ) -> ScaleDownPlan:
        now = loop.now
        o = self.options
        if self.latest_update is not None and now - self.latest_update < self.min_update_interval:
            self.min_update_interval = now - self.latest_update
        self.latest_update = now
        limit = self.unneeded_limit()
        self._deleting_unneeded = 0
        unremovable: dict[str, str] = {}
        blocking: dict[str, tuple[str, str]] = {}
        targets: dict[str, int] = {}
        for gid, g in loop.groups.items():
            try:
                targets[gid] = g.target_size()
            except CloudProviderError:
                continue
        deleting = {d.node.name for d in deletions}
        self._started_drained = {k: v for k, v in self._started_drained.items() if k in deleting}
        being_deleted = deleting | {n.name for n in all_nodes if n.taints and is_being_deleted(n, now)}
        names = [n.name for n in all_nodes]
        # Each node's pods in the snapshot and their version (for the memos), looked up in C. The pod
        # lists are shared (pods_now): the removal simulation below does not change them.
        slots = list(map(snapshot.slot_index.__getitem__, names))
        pods_now, versions_now = snapshot.pods_now(), snapshot.pods_versions()
        snap_pods: dict[str, Sequence[Pod]] = dict(zip(names, map(pods_now.__getitem__, slots), strict=True))
        versions: dict[str, int] = dict(zip(names, map(versions_now.__getitem__, slots), strict=True))
        # unremovable.Nodes.Update: a recheck time ends strictly after it (ttl.After(now)), and a node
        # no longer in the snapshot is forgotten.
        self.recently_unremovable = {
            k: v for k, v in self.recently_unremovable.items() if v > now and k in snap_pods
        }
        # GetScaleDownCandidates: nodes of groups above their min size, sorted (empty nodes first,
        # then the last update's unneeded nodes) before the deletions in progress leave the list.
        listed = []
        min_sizes = {gid: loop.groups[gid].min_size() for gid in targets}
        above_min = {gid for gid, target in targets.items() if target > min_sizes[gid]}
        not_candidates = loop.result.not_candidates
        for n, name, cg in zip(all_nodes, names, map(loop.group_of.get, names), strict=True):
            if cg in above_min:  # most nodes
                listed.append(n)
                if name in being_deleted:
                    not_candidates[name] = "being deleted"
            elif name in being_deleted:
                not_candidates[name] = "being deleted"
            elif cg is None:
                not_candidates[name] = "not in a node group the autoscaler manages"
            elif cg not in targets:
                not_candidates[name] = f"the size of node group {cg} could not be read"
            else:
                not_candidates[name] = f"node group {cg} is at its minimum size ({min_sizes[cg]})"
        listed = self._order.sort(listed, snap_pods, versions, self.previous_candidates, now)
        candidates = [n for n in listed if n.name not in being_deleted] if being_deleted else listed
        destinations = [n for n in names if n not in being_deleted] if being_deleted else names
        self._utilization.keep_only(snap_pods)
        self._eligibility.keep_only(snap_pods)
        eligibility = filter_out_unremovable(
            candidates,
            EligibilityInput(
                pods_by_node=snap_pods,
                group_of=loop.group_of,
                group_options=registry.group_options,
                scale_down_unready_enabled=o.scale_down_unready_enabled,
                ignore_mirror_pods_utilization=o.ignore_mirror_pods_utilization,
                recently_unremovable=self.recently_unremovable,
                gpu_label=loop.gpu_label,
                memo=self._utilization,
                pods_versions=versions,
                kept=self._eligibility,
                compat=o.compat,
            ),
            now,
        )
        reasons = eligibility.unremovable
        unremovable.update(zip(reasons, map(str, reasons.values()), strict=True))  # in C: most nodes
        eligible = list(eligibility.candidates)
        by_name = dict(zip(names, all_nodes, strict=True))

        def counted(name: str) -> bool:  # atomic (zero-or-max) groups' nodes do not count
            group = loop.group_of.get(name)
            return group is None or not registry.group_options(group).zero_or_max_node_scaling

        # The PDBs' disruptions are spent as nodes are found removable (RemainingPdbTracker).
        pdbs = RemainingPdbs(drain_ctx.pdbs, self._pdb_coverage)
        drainer = self._drains.drainer(drain_ctx)
        risky: set[str] = set()
        on_removable = None
        if pdbs:
            drainer = _with_remaining_pdbs(drainer, drain_ctx, pdbs)

            def on_removable(removal: RemovalResult) -> None:
                moved = [p for _, group in removal.moves for p in group]
                if not pdbs.in_parallel(moved):
                    risky.add(removal.node)
                pdbs.remove_pods(moved)

        check = simulate_removals(
            snapshot,
            eligible,
            destinations,
            drain=drainer,
            limit=limit,
            counted=counted,
            memo=self._removals,
            on_removable=on_removable,
        )
        for name in eligible[len(check.results) :]:
            loop.result.not_candidates[name] = (
                f"not simulated this loop: {limit} unneeded nodes found already (upstream's limit)"
            )
        found: list[tuple[NodeView, bool]] = []
        removals: dict[str, RemovalResult] = {}  # where each pod goes: spelled out for deletions only
        for r in check.results:
            if r.removable:
                found.append((by_name[r.node], not r.moves))
                removals[r.node] = r
            else:
                unremovable[r.node] = str(r.outcome)
                if r.blocking is not None:
                    blocking[r.node] = (r.blocking[0], str(r.blocking[1]))
                self.recently_unremovable[r.node] = now + o.unremovable_node_recheck_timeout
        previous = set(self.unneeded)
        self.unneeded = update_unneeded(self.unneeded, found, now, risky)
        self.previous_candidates = frozenset(self.unneeded)
        unneeded = {k: u.since for k, u in self.unneeded.items()}
        add, remove = self._soft_taints(loop, all_nodes)

        def done(result: ScaleDownResult, delete: tuple[NodeToDelete, ...] = ()) -> ScaleDownPlan:
            return ScaleDownPlan(
                result,
                delete,
                add,
                remove,
                unneeded,
                unremovable,
                tuple(sorted(previous - set(self.unneeded))),
                blocking,
            )

        if disabled or scale_down_in_cooldown(
            times,
            now,
            delay_after_add=o.scale_down_delay_after_add,
            delay_after_failure=o.scale_down_delay_after_failure,
            delay_after_delete=o.scale_down_delay_after_delete,
            disabled_this_loop=disabled,
            delay_type_local=o.scale_down_delay_type_local,
        ):
            return done(ScaleDownResult.IN_COOLDOWN)
        # No early "no unneeded nodes" answer: CA 1.31's planner hands the actuator empty lists and
        # the loop's result is ScaleDownNoNodeDeleted (ScaleDownNoUnneeded is the legacy scale-down's).
        in_progress: dict[str, int] = {}
        drain_in_progress = 0
        for d in deletions:
            in_progress[d.group.id()] = in_progress.get(d.group.id(), 0) + 1
            drain_in_progress += d.drain  # how it started (started_as_drain)
        sizes = {
            gid: GroupSizes(t, loop.groups[gid].min_size(), in_progress.get(gid, 0))
            for gid, t in targets.items()
        }
        within_min_limits = self._min_limits(loop, snapshot, all_nodes, by_name, now)
        if self.quota_minimums is not None:
            within_min_limits = self.quota_minimums(within_min_limits)
        removable = removable_at(
            list(self.unneeded.values()),
            now,
            lambda n: loop.group_of.get(n.name),
            registry.group_options,
            sizes,
            within_min_limits,
            zero_time_immediate=o.compat.zero_removal_time_immediate,
        )
        for name, why in removable.unremovable.items():
            unremovable[name] = str(why)
        # sortByRisk: drain nodes whose pods would take more of a PDB than it has left go last.
        drain_order = [n for n in removable.drain if n not in risky] + [
            n for n in removable.drain if n in risky
        ]
        pairs_empty = [(n, eg) for n in removable.empty if (eg := loop.group_of.get(n)) is not None]
        pairs_drain = [(n, dg) for n in drain_order if (dg := loop.group_of.get(n)) is not None]
        atomic = frozenset(
            g for _, g in pairs_empty + pairs_drain if registry.group_options(g).zero_or_max_node_scaling
        )
        if atomic:
            pairs_empty, pairs_drain = _whole_atomic_groups(pairs_empty, pairs_drain, atomic, targets)
        empty, drain = crop_nodes(
            group_nodes(pairs_empty, atomic),
            group_nodes(pairs_drain, atomic),
            Budget(
                o.max_scale_down_parallelism,
                o.max_drain_parallelism,
                len(deletions) - drain_in_progress,
                drain_in_progress,
            ),
            targets,
        )
        delete: list[NodeToDelete] = []
        for batch, is_empty in ((empty, True), (drain, False)):
            for gn in batch:
                for name in gn.nodes:
                    node = by_name[name]
                    moving = tuple(p.name for p in snap_pods.get(name, ()) if must_move_now(p))
                    util = eligibility.utilization.get(name)
                    util_text = (
                        f"{{{util.cpu:.2f} {util.memory:.2f} {util.utilization:.2f}}}" if util else "{}"
                    )
                    delete.append(
                        NodeToDelete(
                            node,
                            gn.group,
                            is_empty,
                            scale_down_reason(node, not is_empty),
                            self.unneeded[name].since,
                            _moves(removals.get(name)),
                            moving,
                            util_text,
                            gn.group in atomic,
                        )
                    )
        if not delete:
            return done(ScaleDownResult.NO_NODE_DELETED)
        for item in delete:
            self._started_drained[item.node.name] = not item.empty
        return done(ScaleDownResult.NODE_DELETE_STARTED, tuple(delete))

    def _min_limits(
        self,
        loop: LoopContext,
        snapshot: ClusterSnapshot,
        all_nodes: Sequence[NodeView],
        by_name: Mapping[str, NodeView],
        now: float,
    ) -> Callable[[NodeView], UnremovableReason | None]:
        """``LimitsLeft`` and ``TryDecrementBy``: whether removing a node (after those accepted before it)
        keeps every cluster resource with a minimum above 0 at or above it. Totals count the snapshot's
        nodes (the upcoming placeholders too) but those being deleted; GPUs by type, each group's first
        node's target standing for the group's (``customResourcesTotal``'s per-group cache)."""
        minimum = {r: m for r, m in self.limits.minimum.items() if m > 0}
        if not minimum:
            return lambda node: None
        placeholders = [
            snapshot.node(i) for i in snapshot.active_indices().tolist() if snapshot.name(i) not in by_name
        ]
        counted = [n for n in [*all_nodes, *placeholders] if not (n.taints and is_being_deleted(n, now))]
        usage = self.limits.usage(counted)
        gpus = self.limits.gpus_limited
        label = loop.gpu_label

        def group(node: NodeView) -> NodeGroup | None:
            gid = loop.group_of.get(node.name)
            return None if gid is None else loop.groups.get(gid)

        if gpus:
            per_group: dict[str, GpuTarget | None] = {}
            targets: list[tuple[GpuTarget | None, int]] = []
            try:
                for n in counted:
                    g = group(n)
                    if g is not None and g.id() in per_group:
                        targets.append((per_group[g.id()], 1))
                        continue
                    target = gpu_target(n, label, g)
                    if g is not None:
                        per_group[g.id()] = target
                    targets.append((target, 1))
                usage.update(gpu_usage(targets))
            except UnknownGpuTarget:
                usage.update(self.limits.unknown_gpus())
        left = limits_left(usage, minimum)

        def within(node: NodeView) -> UnremovableReason | None:
            gpu = None
            if gpus:
                try:
                    gpu = gpu_target(node, label, group(node))
                except UnknownGpuTarget:
                    return UnremovableReason.UNEXPECTED_ERROR  # DeltaForNode's error
            if try_decrement(left, node_resources(node, gpu)):
                return None
            return UnremovableReason.MINIMAL_RESOURCE_LIMIT_EXCEEDED

        return within

    def _soft_taints(
        self, loop: LoopContext, nodes: Sequence[NodeView]
    ) -> tuple[tuple[tuple[str, Taint], ...], tuple[str, ...]]:
        """``DeletionCandidateOfClusterAutoscaler=<unix seconds>:PreferNoSchedule`` on unneeded nodes of
        autoscaled groups, removed once they are needed again (CA spec §7.9), within the per-loop budget
        (``--max-bulk-soft-taint-count`` API calls; 0 turns the feature off), removals first
        (``UpdateSoftDeletionTaints``). Within the loop no time passes for the API calls, so the
        ``--max-bulk-soft-taint-time`` budget (``elapsed >= budget`` stops) only stops them all when
        it is 0 or less."""
        budget = self.options.max_bulk_soft_taint_count
        if budget <= 0 or self.options.max_bulk_soft_taint_time <= 0:
            return (), ()
        unneeded = self.unneeded
        # Nodes of autoscaled groups; those with a ToBeDeleted taint (however old, whatever its value)
        # are left alone. Upstream spends the budget on removals first, then on additions.
        taintable: list[NodeView] = []
        remove: list[str] = []
        for node in nodes:
            taints = node.taints
            wanted = node.name in unneeded
            if not taints and not wanted:
                continue  # no taint to add or remove: most nodes
            if loop.group_of.get(node.name) is None or (
                taints and any(t.key == TO_BE_DELETED_TAINT for t in taints)
            ):
                continue
            has = bool(taints) and any(t.key == DELETION_CANDIDATE_TAINT for t in taints)
            if wanted and not has:
                taintable.append(node)
            elif has and not wanted and len(remove) < budget:
                remove.append(node.name)
        add: list[tuple[str, Taint]] = []
        for node in taintable[: budget - len(remove)]:
            since = int(unneeded[node.name].since)
            add.append((node.name, Taint(DELETION_CANDIDATE_TAINT, str(since), "PreferNoSchedule")))
        return tuple(add), tuple(remove)
