"""Can these nodes be removed: Cluster Autoscaler's removal simulation (``SimulateNodeRemoval``).

Candidates are tried in the given order. For each, the pods that must move (all but DaemonSet and
mirror pods, unless the caller says otherwise) are unbound and placed on destinations: nodes that are
destinations, still present, not cordoned, and not the candidate. If every pod finds a place, the moves
are kept for the next candidates and the node is removed, so it is no longer a destination either;
otherwise the attempt is reverted and the node is kept with ``NoPlaceToMovePods``.

Placement follows upstream's ``FitsAnyNodeMatching``: each pod goes to the first fitting destination
at or after a cursor that starts at slot 0 and moves past every node that receives a pod (round robin
from the last success), pods taken equivalence group by equivalence group in order of first
appearance. Groups of simple pods are placed in bulk: a walk over the few nodes after the cursor
when those take the whole group one pod each (the usual case), else :func:`round_robin_fill` over
every node; both give the same moves (property-tested). The whole check runs in a fork that is
reverted at the end unless ``keep`` is set.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import BlockReason, NodeDrain
from kubetide.scheduling.equivalence import group_pods
from kubetide.scheduling.fit import FitChecker, PodFacts
from kubetide.scheduling.placement import round_robin_fill
from kubetide.scheduling.predicates.node_resources import room_for_one
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["RemovalOutcome", "RemovalResult", "ScaleDownCheck", "must_move", "simulate_removals"]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
DAEMONSET_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"


Drainer = Callable[[Sequence[Pod]], NodeDrain]


class RemovalOutcome(StrEnum):
    REMOVABLE = "Removable"
    NO_PLACE_TO_MOVE_PODS = "NoPlaceToMovePods"
    BLOCKED_BY_POD = "BlockedByPod"
    NODE_NOT_FOUND = "NodeNotFound"


def must_move(pod: Pod) -> bool:
    """Default: everything moves except mirror pods (ignored) and DaemonSet pods (only evicted)."""
    notes = pod.annotations
    if notes and (MIRROR_ANNOTATION in notes or notes.get(DAEMONSET_ANNOTATION) == "true"):
        return False
    return all(not (o.controller and o.kind == "DaemonSet") for o in pod.owners)


@dataclass(frozen=True, slots=True)
class RemovalResult:
    """The decision for one candidate, with where each moved pod went or which pod found no place."""

    node: str
    outcome: RemovalOutcome
    moves: tuple[tuple[str, tuple[Pod, ...]], ...] = ()  # (destination node, pods moved there)
    unplaced_pod: str | None = None
    blocking: tuple[str, str] | None = None  # (pod namespace/name, drainability reason)

    @property
    def removable(self) -> bool:
        return self.outcome is RemovalOutcome.REMOVABLE


@dataclass(frozen=True, slots=True)
class ScaleDownCheck:
    results: tuple[RemovalResult, ...]

    @property
    def removable(self) -> tuple[str, ...]:
        return tuple(r.node for r in self.results if r.removable)


class _Simulation:
    def __init__(self, snap: ClusterSnapshot, destinations: Collection[str] | None) -> None:
        self.snap = snap
        self.checker = FitChecker(snap)
        n = snap.num_slots
        if destinations is None:
            self.dest = snap.active.copy()
        else:
            self.dest = np.zeros(n, np.bool_)
            for name in destinations:
                if snap.has_node(name):
                    self.dest[snap.index_of(name)] = True
        cordoned = np.array([c.unschedulable for c in snap.classes], np.bool_)
        self.dest &= ~cordoned[snap.node_class_ids]  # upstream skips cordoned nodes outright
        self.cursor = 0
        # Plain-integer copies of what the walk after the cursor reads per node (numpy's per-element
        # cost would be most of a walk's time): destinations, classes, allocatable and requested rows.
        # The arrays stay the truth; the rows follow every bind and are re-read after a revert. A
        # destination is always an active node, so the walk needs no active check.
        self._dest = self.dest.tolist()
        self._classes = snap.node_class_ids.tolist()
        self._read_rows()

    def _read_rows(self) -> None:
        self._width = len(self.snap.resources)
        self._alloc = self.snap.allocatable.tolist()
        self._used = self.snap.requested.tolist()

    def _bound(self, slots: Sequence[int], counts: Sequence[int], facts: PodFacts) -> None:
        """Follow binds in the plain rows (the snapshot's arrays are updated by the snapshot)."""
        need = facts.needs(self.snap)
        used = self._used
        for slot, count in zip(slots, counts, strict=True):
            row = used[slot]
            for c, v in need:
                row[c] += count * v

    def try_remove(self, name: str, move: Callable[[Pod], bool], drain: Drainer | None) -> RemovalResult:
        snap = self.snap
        if not snap.has_node(name):
            return RemovalResult(name, RemovalOutcome.NODE_NOT_FOUND)
        i = snap.index_of(name)
        snap.fork()
        cursor = self.cursor
        bound = snap.take_pods(i)
        if drain is not None:
            plan = drain(bound)
            if not plan.drainable:
                snap.revert()
                pod, why = plan.blocking or (
                    plan.on_completion_pods[0],
                    BlockReason.BLOCKED_BY_ON_COMPLETION_POD,
                )
                return RemovalResult(name, RemovalOutcome.BLOCKED_BY_POD, blocking=(pod.key, why.value))
            pods = list(plan.pods_to_move)
        else:
            pods = [p for p in bound if move(p)]
        within: NDArray[np.bool_] | None = None  # the destinations but this node, for the full checks
        moves: list[tuple[str, tuple[Pod, ...]]] = []
        touched: list[int] = []  # slots bound to in this attempt: their rows are re-read if it fails
        for group in group_pods(pods):
            facts = self.checker.facts(group.representative)
            vec = facts.vector(snap)
            if len(snap.resources) != self._width:
                self._read_rows()  # a resource column was added
            if self.checker.is_simple(facts):
                near = self._fill_near(facts, i, cursor, len(group.pods))
                if near is not None:
                    taken, cursor = near
                    snap.add_pods_each(taken, group.pods, vec)
                    self._bound(taken, [1] * len(taken), facts)
                    touched.extend(taken)
                    moves.extend((snap.name(s), (p,)) for s, p in zip(taken, group.pods, strict=True))
                    continue
                if within is None:
                    within = self._within(i)
                filled = round_robin_fill(self.checker.capacity(facts, within), cursor, len(group.pods))
                if filled is None:
                    return self._failed(name, touched, group.representative.key)
                all_counts, cursor = filled
                slots = np.flatnonzero(all_counts)
                counts = all_counts[slots]
                snap.add_pods_bulk(slots, counts, group.pods, vec)
                self._bound(slots.tolist(), counts.tolist(), facts)
                touched.extend(slots.tolist())
                moves.extend(_moves(snap, group.pods, slots, counts))
                continue
            if within is None:
                within = self._within(i)
            for pod in group.pods:
                ok = self.checker.feasible(facts, within)
                pick = _next_true(ok, cursor)
                if pick is None:
                    return self._failed(name, touched, pod.key)
                snap.add_pod(pod, pick, vec)
                self._bound([pick], [1], facts)
                touched.append(pick)
                moves.append((snap.name(pick), (pod,)))
                cursor = (pick + 1) % snap.num_slots
        snap.remove_node(i)
        snap.commit()
        self.dest[i] = self._dest[i] = False
        self.cursor = cursor
        return RemovalResult(name, RemovalOutcome.REMOVABLE, tuple(moves))

    def _within(self, i: int) -> NDArray[np.bool_]:
        within = self.dest.copy()
        within[i] = False
        return within

    def _failed(self, name: str, touched: list[int], unplaced: str) -> RemovalResult:
        self.snap.revert()
        requested = self.snap.requested
        for slot in touched:
            self._used[slot] = requested[slot].tolist()
        return RemovalResult(name, RemovalOutcome.NO_PLACE_TO_MOVE_PODS, unplaced_pod=unplaced)

    def _fill_near(self, facts: PodFacts, skip: int, cursor: int, pods: int) -> tuple[list[int], int] | None:
        """:func:`round_robin_fill` when the nodes just after the cursor take every pod, one each
        (the usual case: a node's few pods of one group), walking only those nodes with plain
        integers: the slots (ascending, as the full fill lists them) and the new cursor. Node
        ``skip`` (the one being removed) takes none. None: do the full fill."""
        n = self.snap.num_slots
        width = max(_NEAR, _NEAR_PER_POD * pods)
        if width >= n:
            return None
        need = facts.needs(self.snap)
        dest, alloc, used = self._dest, self._alloc, self._used
        # Pods whose node selection names nodes are judged per node; the others per node class.
        by_node = self.checker.static_ok if facts.name_dependent else None
        classes_ok = self.checker.class_ok(facts) if by_node is None else []
        classes = self._classes
        taken: list[int] = []
        for k in range(width):
            i = cursor + k if cursor + k < n else cursor + k - n
            if not dest[i] or i == skip:
                continue
            if not (by_node(facts, i) if by_node is not None else classes_ok[classes[i]]):
                continue
            if room_for_one(alloc[i], used[i], need):
                taken.append(i)
                if len(taken) == pods:
                    return sorted(taken), (i + 1) % n
        return None


# How many nodes after the cursor the removal simulation's fill looks at first (at least, and per pod).
_NEAR = 32
_NEAR_PER_POD = 4


def _next_true(mask: NDArray[np.bool_], cursor: int) -> int | None:
    hits = np.flatnonzero(mask)
    if len(hits) == 0:
        return None
    k = int(np.searchsorted(hits, cursor))
    return int(hits[k]) if k < len(hits) else int(hits[0])


def _moves(
    snap: ClusterSnapshot, pods: Sequence[Pod], slots: NDArray[np.intp], counts: NDArray[np.int64]
) -> list[tuple[str, tuple[Pod, ...]]]:
    out: list[tuple[str, tuple[Pod, ...]]] = []
    start = 0
    for slot, count in zip(slots.tolist(), counts.tolist(), strict=True):
        out.append((snap.name(slot), tuple(pods[start : start + count])))
        start += count
    return out


def simulate_removals(
    snap: ClusterSnapshot,
    candidates: Sequence[str],
    destinations: Collection[str] | None = None,
    *,
    move: Callable[[Pod], bool] = must_move,
    drain: Drainer | None = None,
    keep: bool = False,
    limit: int | None = None,
    counted: Callable[[str], bool] | None = None,
) -> ScaleDownCheck:
    """Try to remove ``candidates`` in order (``destinations`` default to every node present).

    Which pods must move is ``move`` per pod, or, when ``drain`` is given (for example
    ``lambda pods: drain_node(pods, ctx)``), the drainability rules, which can also block a node.
    With ``limit``, the candidates left once that many removable nodes were found (those ``counted``
    says count; all by default) are not tried: they have no result.
    """
    snap.fork(copy=not keep)  # hundreds of nodes' pods may move: restoring a copy beats undoing each
    try:
        sim = _Simulation(snap, destinations)
        found: list[RemovalResult] = []
        removable = 0
        for name in candidates:
            if limit is not None and removable >= limit:
                break
            result = sim.try_remove(name, move, drain)
            found.append(result)
            if result.removable and (counted is None or counted(name)):
                removable += 1
        results = tuple(found)
    except BaseException:
        snap.revert()
        raise
    if keep:
        snap.commit()
    else:
        snap.revert()
    return ScaleDownCheck(results)
