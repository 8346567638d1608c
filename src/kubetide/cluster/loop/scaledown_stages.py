"""The stages of the scale-down planner (CA spec §7.2-§7.7), each a function that takes values and
returns one; :class:`~kubetide.cluster.loop.scaledown_plan.ScaleDownPlanner` runs them in upstream's
order and keeps what they leave to remember.

* :func:`list_candidates`: ``GetScaleDownCandidates``, the nodes of groups above their min size (and why
  each other node is not looked at);
* :func:`find_unneeded`: the removal simulation of the eligible nodes, the PDBs' disruptions spent in
  order, up to the limit on unneeded nodes (``UnneededNodes.Update``);
* :func:`soft_taints`: the ``DeletionCandidateOfClusterAutoscaler`` taints to add and remove;
* :func:`removable_now`: the unneeded nodes that may go now (times, min sizes, resource minimums),
  risky drains last, atomic groups whole;
* :func:`within_budgets`: ``CropNodes``, what the parallelism budgets leave of them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from kubetide.cloud.instance import CloudProviderError, NodeGroupAutoscalingOptions
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.loop.deletions import Deletion
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import UnremovableReason
from kubetide.cluster.scaledown.budgets import Budget, GroupNodes, crop_nodes, group_nodes
from kubetide.cluster.scaledown.limits import limits_left, try_decrement
from kubetide.cluster.scaledown.pdb import PdbCoverage, RemainingPdbs
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT, TO_BE_DELETED_TAINT, is_being_deleted
from kubetide.cluster.scaledown.unneeded import GroupSizes, UnneededNode, removable_at
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
from kubetide.scheduling.removal_simulation import RemovalMemo, RemovalResult, simulate_removals
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = [
    "Candidates",
    "PlannerMemos",
    "RemovableNow",
    "UnneededSearch",
    "deletion_budget",
    "find_unneeded",
    "list_candidates",
    "min_limits_check",
    "moves",
    "removable_now",
    "snapshot_pods",
    "soft_taints",
    "target_sizes",
    "within_budgets",
]


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


def moves(removal: RemovalResult | None) -> tuple[tuple[str, str], ...]:
    """(pod ``namespace/name``, destination node) per pod the removal simulation moved."""
    if removal is None:
        return ()
    return tuple((p.key, dest) for dest, pods in removal.moves for p in pods)


def target_sizes(groups: Mapping[str, NodeGroup]) -> dict[str, int]:
    """Each group's target size; a group whose size cannot be read is left out."""
    targets: dict[str, int] = {}
    for gid, g in groups.items():
        try:
            targets[gid] = g.target_size()
        except CloudProviderError:
            continue
    return targets


@dataclass(frozen=True, slots=True)
class Candidates:
    """``GetScaleDownCandidates``: ``listed``, the nodes of groups above their min size in the node
    list's order (those being deleted still among them); ``not_candidates``, the other nodes (and
    those being deleted) with why scale-down does not consider them."""

    listed: tuple[NodeView, ...]
    not_candidates: Mapping[str, str]


def list_candidates(
    group_of: Mapping[str, str | None],
    all_nodes: Sequence[NodeView],
    names: Sequence[str],
    targets: Mapping[str, int],
    min_sizes: Mapping[str, int],
    being_deleted: Collection[str],
) -> Candidates:
    listed = []
    not_candidates: dict[str, str] = {}
    above_min = {gid for gid, target in targets.items() if target > min_sizes[gid]}
    for n, name, cg in zip(all_nodes, names, map(group_of.get, names), strict=True):
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
    return Candidates(tuple(listed), not_candidates)


@dataclass(frozen=True, slots=True)
class UnneededSearch:
    """What the removal simulation found: ``found``, (node, empty) for each removable node in simulation
    order, with ``removals`` (where its pods go); the others' reasons (``unremovable``, ``blocking``);
    ``risky``, removable nodes whose pods would take more of a PDB than it has left; ``not_simulated``,
    the eligible nodes left once the limit on unneeded nodes was reached."""

    found: tuple[tuple[NodeView, bool], ...]
    removals: Mapping[str, RemovalResult]
    unremovable: Mapping[str, str]
    blocking: Mapping[str, tuple[str, str]]
    risky: frozenset[str]
    not_simulated: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PlannerMemos:
    """The planner's memos: answers kept from one loop to the next (the results are the same without)."""

    removals: RemovalMemo
    drains: DrainMemo
    pdb_coverage: PdbCoverage


def find_unneeded(
    snapshot: ClusterSnapshot,
    eligible: Sequence[str],
    destinations: Sequence[str],
    by_name: Mapping[str, NodeView],
    drain_ctx: DrainContext,
    limit: int,
    counted: Callable[[str], bool],
    memos: PlannerMemos,
) -> UnneededSearch:
    """``UnneededNodes.Update``: the removal simulation of the eligible nodes, in order, the PDBs'
    disruptions spent as nodes are found removable (``RemainingPdbTracker``), up to ``limit`` removable
    nodes (those ``counted`` says count)."""
    pdbs = RemainingPdbs(drain_ctx.pdbs, memos.pdb_coverage)
    drainer = memos.drains.drainer(drain_ctx)
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
        memo=memos.removals,
        on_removable=on_removable,
    )
    found: list[tuple[NodeView, bool]] = []
    removals: dict[str, RemovalResult] = {}  # where each pod goes: spelled out for deletions only
    unremovable: dict[str, str] = {}
    blocking: dict[str, tuple[str, str]] = {}
    for r in check.results:
        if r.removable:
            found.append((by_name[r.node], not r.moves))
            removals[r.node] = r
        else:
            unremovable[r.node] = str(r.outcome)
            if r.blocking is not None:
                blocking[r.node] = (r.blocking[0], str(r.blocking[1]))
    not_simulated = tuple(eligible[len(check.results) :])
    return UnneededSearch(tuple(found), removals, unremovable, blocking, frozenset(risky), not_simulated)


def soft_taints(
    nodes: Sequence[NodeView],
    unneeded: Mapping[str, UnneededNode],
    group_of: Mapping[str, str | None],
    budget: int,
    time_budget: float,
) -> tuple[tuple[tuple[str, Taint], ...], tuple[str, ...]]:
    """``DeletionCandidateOfClusterAutoscaler=<unix seconds>:PreferNoSchedule`` on unneeded nodes of
    autoscaled groups, removed once they are needed again (CA spec §7.9), within the per-loop budget
    (``--max-bulk-soft-taint-count`` API calls; 0 turns the feature off), removals first
    (``UpdateSoftDeletionTaints``). Within the loop no time passes for the API calls, so the
    ``--max-bulk-soft-taint-time`` budget (``elapsed >= budget`` stops) only stops them all when
    it is 0 or less."""
    if budget <= 0 or time_budget <= 0:
        return (), ()
    # Nodes of autoscaled groups; those with a ToBeDeleted taint (however old, whatever its value)
    # are left alone. Upstream spends the budget on removals first, then on additions.
    taintable: list[NodeView] = []
    remove: list[str] = []
    for node in nodes:
        taints = node.taints
        wanted = node.name in unneeded
        if not taints and not wanted:
            continue  # no taint to add or remove: most nodes
        if group_of.get(node.name) is None or (taints and any(t.key == TO_BE_DELETED_TAINT for t in taints)):
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


@dataclass(frozen=True, slots=True)
class RemovableNow:
    """The unneeded nodes that may go now, (node, group) in the order they are taken: ``empty`` and
    ``drain`` (risky drains last, an atomic group's nodes only whole and after the others);
    ``atomic``, their atomic groups; ``unremovable``, why the other unneeded nodes stay."""

    empty: tuple[tuple[str, str], ...]
    drain: tuple[tuple[str, str], ...]
    atomic: frozenset[str]
    unremovable: Mapping[str, str]


def removable_now(
    view: LoopView,
    group_options: Callable[[str], NodeGroupAutoscalingOptions],
    unneeded: Sequence[UnneededNode],
    sizes: Mapping[str, GroupSizes],
    targets: Mapping[str, int],
    risky: Collection[str],
    within_min_limits: Callable[[NodeView], UnremovableReason | None],
    zero_time_immediate: bool,
) -> RemovableNow:
    """``removable_at`` (the unneeded and unready times, the min sizes, the resource minimums), then
    upstream's order: drains whose pods would overspend a PDB last (``sortByRisk``), atomic groups whole
    (``AtomicResizeFilteringProcessor``)."""
    removable = removable_at(
        list(unneeded),
        view.now,
        lambda n: view.group_of.get(n.name),
        group_options,
        sizes,
        within_min_limits,
        zero_time_immediate=zero_time_immediate,
    )
    drain_order = [n for n in removable.drain if n not in risky] + [n for n in removable.drain if n in risky]
    pairs_empty = [(n, eg) for n in removable.empty if (eg := view.group_of.get(n)) is not None]
    pairs_drain = [(n, dg) for n in drain_order if (dg := view.group_of.get(n)) is not None]
    atomic = frozenset(g for _, g in pairs_empty + pairs_drain if group_options(g).zero_or_max_node_scaling)
    if atomic:
        pairs_empty, pairs_drain = _whole_atomic_groups(pairs_empty, pairs_drain, atomic, targets)
    unremovable = {name: str(why) for name, why in removable.unremovable.items()}
    return RemovableNow(tuple(pairs_empty), tuple(pairs_drain), atomic, unremovable)


def within_budgets(
    removable: RemovableNow, budget: Budget, targets: Mapping[str, int]
) -> tuple[list[GroupNodes], list[GroupNodes]]:
    """``CropNodes``: the empty and drained nodes, by group, that the parallelism budgets leave."""
    atomic = removable.atomic
    return crop_nodes(
        group_nodes(list(removable.empty), atomic),
        group_nodes(list(removable.drain), atomic),
        budget,
        targets,
    )


def deletion_budget(
    deletions: Sequence[Deletion], options: AutoscalingOptions
) -> tuple[Budget, dict[str, int]]:
    """The parallelism budgets less the deletions in progress (how each started: empty or drained), and
    the deletions in progress per group."""
    in_progress: dict[str, int] = {}
    drain_in_progress = 0
    for d in deletions:
        in_progress[d.group.id()] = in_progress.get(d.group.id(), 0) + 1
        drain_in_progress += d.drain  # how it started (started_as_drain)
    budget = Budget(
        options.max_scale_down_parallelism,
        options.max_drain_parallelism,
        len(deletions) - drain_in_progress,
        drain_in_progress,
    )
    return budget, in_progress


def min_limits_check(
    limits: ResourceLimits,
    view: LoopView,
    snapshot: ClusterSnapshot,
    all_nodes: Sequence[NodeView],
    by_name: Mapping[str, NodeView],
) -> Callable[[NodeView], UnremovableReason | None]:
    """``LimitsLeft`` and ``TryDecrementBy``: whether removing a node (after those accepted before it)
    keeps every cluster resource with a minimum above 0 at or above it. Totals count the snapshot's
    nodes (the upcoming placeholders too) but those being deleted; GPUs by type, each group's first
    node's target standing for the group's (``customResourcesTotal``'s per-group cache)."""
    minimum = {r: m for r, m in limits.minimum.items() if m > 0}
    if not minimum:
        return lambda node: None
    now = view.now
    placeholders = [
        snapshot.node(i) for i in snapshot.active_indices().tolist() if snapshot.name(i) not in by_name
    ]
    counted = [n for n in [*all_nodes, *placeholders] if not (n.taints and is_being_deleted(n, now))]
    usage = limits.usage(counted)
    gpus = limits.gpus_limited
    label = view.gpu_label

    def group(node: NodeView) -> NodeGroup | None:
        gid = view.group_of.get(node.name)
        return None if gid is None else view.groups.get(gid)

    if gpus:
        try:
            usage.update(gpu_usage(_gpu_targets(counted, label, group)))
        except UnknownGpuTarget:
            usage.update(limits.unknown_gpus())
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


def _gpu_targets(
    nodes: Sequence[NodeView], label: str, group: Callable[[NodeView], NodeGroup | None]
) -> list[tuple[GpuTarget | None, int]]:
    """Each node's GPU target, a group's first node's standing for the group's."""
    per_group: dict[str, GpuTarget | None] = {}
    targets: list[tuple[GpuTarget | None, int]] = []
    for n in nodes:
        g = group(n)
        if g is not None and g.id() in per_group:
            targets.append((per_group[g.id()], 1))
            continue
        target = gpu_target(n, label, g)
        if g is not None:
            per_group[g.id()] = target
        targets.append((target, 1))
    return targets


def snapshot_pods(
    snapshot: ClusterSnapshot, names: Sequence[str]
) -> tuple[dict[str, Sequence[Pod]], dict[str, int]]:
    """Each node's pods in the snapshot and their version (for the memos), looked up in C. The pod
    lists are shared (pods_now): the removal simulation does not change them."""
    slots = list(map(snapshot.slot_index.__getitem__, names))
    pods_now, versions_now = snapshot.pods_now(), snapshot.pods_versions()
    snap_pods = dict(zip(names, map(pods_now.__getitem__, slots), strict=True))
    versions = dict(zip(names, map(versions_now.__getitem__, slots), strict=True))
    return snap_pods, versions
