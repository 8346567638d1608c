"""The scale-down step (CA spec §7): which nodes are unneeded, which of them go now, and the soft taints,
as one frozen :class:`ScaleDownPlan` (Karpenter's "decide, then act").

:class:`ScaleDownPlanner` keeps what upstream's planner keeps between loops (the unneeded timers, the
recently-unremovable nodes, the limit on the nodes it simulates) and, each loop, runs its stages, each a
function that takes values and returns one (:mod:`kubetide.cluster.loop.scaledown_stages`): the
candidates (then upstream's order), eligibility, the unneeded nodes (the removal simulation, the PDBs'
disruptions spent in order), the unneeded timers, the soft taints, the cooldown, the nodes removable
now and the budgets. The plan
says, per node to delete, its group, whether it is empty or drained, why it is unneeded and where each
pod goes per the simulation; and which soft taints to add or remove. It changes nothing in the cluster
or the cloud: :mod:`kubetide.cluster.loop.scaledown_actuator` executes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.loop.deletions import Deletion, scale_down_reason
from kubetide.cluster.loop.scaledown_stages import (
    PlannerMemos,
    deletion_budget,
    find_unneeded,
    list_candidates,
    min_limits_check,
    moves,
    removable_now,
    snapshot_pods,
    soft_taints,
    target_sizes,
    within_budgets,
)
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import ScaleDownResult, UnremovableReason
from kubetide.cluster.scaledown.budgets import GroupNodes
from kubetide.cluster.scaledown.candidates import CandidateOrder
from kubetide.cluster.scaledown.cooldown import ScaleDownTimes, scale_down_in_cooldown
from kubetide.cluster.scaledown.eligibility import (
    EligibilityInput,
    EligibilityMemo,
    EligibilityResult,
    filter_out_unremovable,
)
from kubetide.cluster.scaledown.pdb import PdbCoverage
from kubetide.cluster.scaledown.taints import is_being_deleted
from kubetide.cluster.scaledown.unneeded import GroupSizes, UnneededNode, update_unneeded
from kubetide.cluster.scaleup.limits import (
    ResourceLimits,
)
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import DrainContext, DrainMemo
from kubetide.scheduling.removal_simulation import RemovalMemo, RemovalResult, must_move
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.scheduling.utilization import Utilization, UtilizationMemo

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
    # kubetide, for explain: nodes scale-down did not consider at all, and why (upstream drops them
    # from the candidates without a reason: a group at its minimum size, no group, being deleted).
    not_candidates: Mapping[str, str] = field(default_factory=dict)


def _nodes_to_delete(
    batches: tuple[list[GroupNodes], list[GroupNodes]],
    by_name: Mapping[str, NodeView],
    snap_pods: Mapping[str, Sequence[Pod]],
    utilization: Mapping[str, Utilization],
    unneeded: Mapping[str, UnneededNode],
    removals: Mapping[str, RemovalResult],
    atomic: frozenset[str],
) -> tuple[NodeToDelete, ...]:
    delete: list[NodeToDelete] = []
    for batch, is_empty in ((batches[0], True), (batches[1], False)):
        for gn in batch:
            for name in gn.nodes:
                node = by_name[name]
                moving = tuple(p.name for p in snap_pods.get(name, ()) if must_move_now(p))
                util = utilization.get(name)
                util_text = f"{{{util.cpu:.2f} {util.memory:.2f} {util.utilization:.2f}}}" if util else "{}"
                delete.append(
                    NodeToDelete(
                        node,
                        gn.group,
                        is_empty,
                        scale_down_reason(node, not is_empty),
                        unneeded[name].since,
                        moves(removals.get(name)),
                        moving,
                        util_text,
                        gn.group in atomic,
                    )
                )
    return tuple(delete)


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
        # Removal attempts that repeat exactly are replayed, and drain answers that would be the same;
        # which PDBs cover each pod.
        self._memos = PlannerMemos(RemovalMemo(), DrainMemo(), PdbCoverage())
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

    def _updated_at(self, now: float) -> int:
        """An update at ``now``: the interval between updates and the limit on the nodes simulated."""
        if self.latest_update is not None and now - self.latest_update < self.min_update_interval:
            self.min_update_interval = now - self.latest_update
        self.latest_update = now
        limit = self.unneeded_limit()
        self._deleting_unneeded = 0
        return limit

    def plan(
        self,
        view: LoopView,
        registry: ClusterStateRegistry,
        snapshot: ClusterSnapshot,
        all_nodes: Sequence[NodeView],
        drain_ctx: DrainContext,
        deletions: Sequence[Deletion],
        times: ScaleDownTimes,
        disabled: bool,
    ) -> ScaleDownPlan:
        """The stages in upstream's order, the planner's memory updated from what they return."""
        now, o = view.now, self.options
        limit = self._updated_at(now)
        targets = target_sizes(view.groups)
        deleting = {d.node.name for d in deletions}
        self._started_drained = {k: v for k, v in self._started_drained.items() if k in deleting}
        being_deleted = deleting | {n.name for n in all_nodes if n.taints and is_being_deleted(n, now)}
        names = [n.name for n in all_nodes]
        snap_pods, versions = snapshot_pods(snapshot, names)
        # unremovable.Nodes.Update: a recheck time ends strictly after it (ttl.After(now)), and a node
        # no longer in the snapshot is forgotten.
        self.recently_unremovable = {
            k: v for k, v in self.recently_unremovable.items() if v > now and k in snap_pods
        }
        min_sizes = {gid: view.groups[gid].min_size() for gid in targets}
        found = list_candidates(view.group_of, all_nodes, names, targets, min_sizes, being_deleted)
        # Sorted (empty nodes first, then the last update's unneeded nodes) before the deletions in
        # progress leave the list.
        listed = self._order.sort(found.listed, snap_pods, versions, self.previous_candidates, now)
        candidates = [n for n in listed if n.name not in being_deleted] if being_deleted else listed
        destinations = [n for n in names if n not in being_deleted] if being_deleted else names
        eligibility = self._eligible(view, registry, candidates, snap_pods, versions)
        reasons = eligibility.unremovable
        unremovable = dict(zip(reasons, map(str, reasons.values()), strict=True))  # in C: most nodes
        by_name = dict(zip(names, all_nodes, strict=True))

        def counted(name: str) -> bool:  # atomic (zero-or-max) groups' nodes do not count
            group = view.group_of.get(name)
            return group is None or not registry.group_options(group).zero_or_max_node_scaling

        search = find_unneeded(
            snapshot,
            list(eligibility.candidates),
            destinations,
            by_name,
            drain_ctx,
            limit,
            counted,
            self._memos,
        )
        not_candidates = dict(found.not_candidates)
        for name in search.not_simulated:
            not_candidates[name] = (
                f"not simulated this loop: {limit} unneeded nodes found already (upstream's limit)"
            )
        unremovable.update(search.unremovable)
        for name in search.unremovable:
            self.recently_unremovable[name] = now + o.unremovable_node_recheck_timeout
        previous = set(self.unneeded)
        self.unneeded = update_unneeded(self.unneeded, search.found, now, search.risky)
        self.previous_candidates = frozenset(self.unneeded)
        add, remove = soft_taints(
            all_nodes, self.unneeded, view.group_of, o.max_bulk_soft_taint_count, o.max_bulk_soft_taint_time
        )
        unneeded = {k: u.since for k, u in self.unneeded.items()}
        no_longer_unneeded = tuple(sorted(previous - set(self.unneeded)))

        def done(result: ScaleDownResult, delete: tuple[NodeToDelete, ...] = ()) -> ScaleDownPlan:
            return ScaleDownPlan(
                result,
                delete,
                add,
                remove,
                unneeded,
                unremovable,
                no_longer_unneeded,
                search.blocking,
                not_candidates,
            )

        if self._in_cooldown(times, now, disabled):
            return done(ScaleDownResult.IN_COOLDOWN)
        # No early "no unneeded nodes" answer: CA 1.31's planner hands the actuator empty lists and
        # the loop's result is ScaleDownNoNodeDeleted (ScaleDownNoUnneeded is the legacy scale-down's).
        budget, in_progress = deletion_budget(deletions, o)
        sizes = {
            gid: GroupSizes(t, view.groups[gid].min_size(), in_progress.get(gid, 0))
            for gid, t in targets.items()
        }
        within_min_limits = min_limits_check(self.limits, view, snapshot, all_nodes, by_name)
        if self.quota_minimums is not None:
            within_min_limits = self.quota_minimums(within_min_limits)
        removable = removable_now(
            view,
            registry.group_options,
            list(self.unneeded.values()),
            sizes,
            targets,
            search.risky,
            within_min_limits,
            o.compat.zero_removal_time_immediate,
        )
        unremovable.update(removable.unremovable)
        delete = _nodes_to_delete(
            within_budgets(removable, budget, targets),
            by_name,
            snap_pods,
            eligibility.utilization,
            self.unneeded,
            search.removals,
            removable.atomic,
        )
        if not delete:
            return done(ScaleDownResult.NO_NODE_DELETED)
        for item in delete:
            self._started_drained[item.node.name] = not item.empty
        return done(ScaleDownResult.NODE_DELETE_STARTED, delete)

    def _eligible(
        self,
        view: LoopView,
        registry: ClusterStateRegistry,
        candidates: Sequence[NodeView],
        snap_pods: Mapping[str, Sequence[Pod]],
        versions: Mapping[str, int],
    ) -> EligibilityResult:
        """``FilterOutUnremovable``, with the answers kept from the last loop."""
        o = self.options
        self._utilization.keep_only(snap_pods)
        self._eligibility.keep_only(snap_pods)
        return filter_out_unremovable(
            candidates,
            EligibilityInput(
                pods_by_node=snap_pods,
                group_of=view.group_of,
                group_options=registry.group_options,
                scale_down_unready_enabled=o.scale_down_unready_enabled,
                ignore_mirror_pods_utilization=o.ignore_mirror_pods_utilization,
                recently_unremovable=self.recently_unremovable,
                gpu_label=view.gpu_label,
                memo=self._utilization,
                pods_versions=versions,
                kept=self._eligibility,
                compat=o.compat,
            ),
            view.now,
        )

    def _in_cooldown(self, times: ScaleDownTimes, now: float, disabled: bool) -> bool:
        o = self.options
        return disabled or scale_down_in_cooldown(
            times,
            now,
            delay_after_add=o.scale_down_delay_after_add,
            delay_after_failure=o.scale_down_delay_after_failure,
            delay_after_delete=o.scale_down_delay_after_delete,
            disabled_this_loop=disabled,
            delay_type_local=o.scale_down_delay_type_local,
        )
