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
every node; both give the same moves (property-tested). Pods that the inter-pod filters or host ports
decide are placed one by one, walking the few nodes after the cursor with the filters' per-domain
rules as plain-integer tests, else asking every node. The whole check runs in a fork that is
reverted at the end unless ``keep`` is set.

A :class:`RemovalMemo` carried from one call to the next (one loop to the next) lets an attempt reuse
its last result instead of walking again: see :class:`RemovalMemo` for when that is exact.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import BlockReason, NodeDrain
from kubetide.scheduling.equivalence import equivalence_keys, group_pods, has_equivalence_key
from kubetide.scheduling.fit import FitChecker, PodFacts
from kubetide.scheduling.placement import round_robin_fill
from kubetide.scheduling.predicates.domains import rules_tests
from kubetide.scheduling.snapshot import ClusterSnapshot, NodeClass

__all__ = [
    "RemovalMemo",
    "RemovalOutcome",
    "RemovalResult",
    "ScaleDownCheck",
    "must_move",
    "simulate_removals",
]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
DAEMONSET_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"


_T = TypeVar("_T")

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
    # The moves, flat (a removal simulation of thousands of nodes would otherwise leave two tuples per
    # moved pod for the garbage collector's full passes to walk): destination node and pod count per
    # move, and the pods moved, move after move. :attr:`moves` pairs them.
    moved_to: tuple[str, ...] = ()
    moved_counts: tuple[int, ...] = ()
    moved_pods: tuple[Pod, ...] = ()
    unplaced_pod: str | None = None
    blocking: tuple[str, str] | None = None  # (pod namespace/name, drainability reason)

    @property
    def moves(self) -> tuple[tuple[str, tuple[Pod, ...]], ...]:
        """(destination node, pods moved there) per move."""
        out, start = [], 0
        for dest, count in zip(self.moved_to, self.moved_counts, strict=True):
            out.append((dest, self.moved_pods[start : start + count]))
            start += count
        return tuple(out)

    @property
    def removable(self) -> bool:
        return self.outcome is RemovalOutcome.REMOVABLE


@dataclass(frozen=True, slots=True)
class ScaleDownCheck:
    results: tuple[RemovalResult, ...]

    @property
    def removable(self) -> tuple[str, ...]:
        return tuple(r.node for r in self.results if r.removable)


_Group = tuple[tuple[int, ...], tuple[Pod, ...], NDArray[np.int64], list[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One removable attempt whose every pod group was placed by the walk after the cursor, with all
    the walk read: the slots from the cursor on (``len(names)`` of them, none twice), each slot's name,
    destination flag, node class, allocatable and requested row as they were when the attempt began;
    and its binds: pod ``k`` to the slot ``offsets[k]`` after the cursor, requesting ``rows[k]``
    (``needs[k]`` as (column, amount) pairs), in binding order."""

    pods: tuple[Pod, ...]
    names: list[str]
    dest: list[bool]
    classes: list[int]
    alloc: list[list[int]]
    used: list[list[int]]
    offsets: NDArray[np.intp]
    moved: tuple[Pod, ...]
    rows: NDArray[np.int64]
    needs: list[list[tuple[int, int]]]
    wrap: int | None  # the offset at which the slots wrapped past the last one, if they did
    widest: int  # the largest walk window a group used: the near walk needs more slots than this
    result: RemovalResult


class RemovalMemo:
    """The removal attempts of the last :func:`simulate_removals` call, by candidate name.

    Cluster Autoscaler simulates every candidate's removal again each loop, and in a steady cluster
    almost every attempt repeats the last one exactly. An attempt is a deterministic function of the
    pods it moves, the cursor, and the slots its walk reads; a recorded attempt is replayed (its
    binds applied, its result returned) when the pods are the very same objects in the same order
    and the slots from the cursor on have the same names and the same destination flags, classes,
    allocatable and requested rows as recorded. Then a fresh walk would read exactly what the
    recorded one read and take the same slots, so the replay is exact. Slots are matched by name
    from the cursor on, so an attempt whose slots shifted (a node before them was deleted) is still
    reused. Only attempts placed wholly by the near walk of simple pods (no pod whose filters name
    nodes) are recorded; the others are walked every time. The memo is dropped when the snapshot's
    resource columns or node classes change meaning.
    """

    def __init__(self) -> None:
        self._attempts: dict[str, _Attempt] = {}
        self._resources: list[str] = []
        self._classes: list[NodeClass] = []
        self._rows: _Rows | None = None
        # The filters' per-template facts (the static filters' answer per node class above all), kept
        # while the snapshot and its class list are the same: a walk asks them for every pod group it
        # moves, and the classes and templates rarely change between loops.
        self._checker: tuple[FitChecker, list[NodeClass]] | None = None
        self.replayed = 0  # attempts replayed and attempts walked, over the memo's life
        self.walked = 0

    def _begin(self, snap: ClusterSnapshot) -> None:
        known = len(self._classes)
        if snap.resources != self._resources or snap.classes[:known] != self._classes:
            self._attempts.clear()
        self._resources = list(snap.resources)
        self._classes = list(snap.classes)

    def checker(self, snap: ClusterSnapshot) -> FitChecker:
        """A checker for ``snap``: the last call's while its facts still hold. Classes and resource
        columns are only ever appended to a snapshot (the facts extend to them), except when
        ``drop_unused_classes`` renumbers the classes into a new list. Bounded: pods of templates
        that come and go would otherwise pile up facts."""
        kept = self._checker
        if kept is None or kept[0].snap is not snap or kept[1] is not snap.classes or kept[0].known > 4096:
            kept = self._checker = (FitChecker(snap), snap.classes)
        return kept[0]

    def _end(self, snap: ClusterSnapshot, made: dict[str, _Attempt], changed: set[int]) -> None:
        """Keep this call's attempts, and earlier ones of candidates still present but not tried;
        ``changed``: the slots whose plain requested rows this call changed."""
        for name, attempt in self._attempts.items():
            if name not in made and snap.has_node(name):
                made[name] = attempt
        self._attempts = made
        if self._rows is not None:
            self._rows.changed |= changed

    def _plain_rows(self, snap: ClusterSnapshot) -> tuple[list[list[int]], list[list[int]]]:
        """``snap``'s allocatable and requested rows as plain integers, from the last call's where the
        snapshot's row is the same and the last walk did not change the plain one."""
        alloc, used = snap.allocatable, snap.requested
        kept = self._rows
        if kept is None or kept.snap is not snap or kept.alloc_now.shape != alloc.shape:
            kept = self._rows = _Rows(snap, alloc.copy(), used.copy(), alloc.tolist(), used.tolist())
            return kept.alloc, kept.used
        for i in np.flatnonzero((alloc != kept.alloc_now).any(axis=1)).tolist():
            kept.alloc[i] = alloc[i].tolist()
        stale = kept.changed.union(np.flatnonzero((used != kept.used_now).any(axis=1)).tolist())
        for i in stale:
            kept.used[i] = used[i].tolist()
        kept.alloc_now[...] = alloc
        kept.used_now[...] = used
        kept.changed = set()
        return kept.alloc, kept.used


class _Rows:
    """Plain-integer copies of a snapshot's allocatable and requested rows, kept from one
    :func:`simulate_removals` call to the next (converting 1,000 rows every loop was a tenth of a
    steady loop's removal simulation): with the arrays they were read from, and the slots whose
    plain row a walk changed since."""

    __slots__ = ("alloc", "alloc_now", "changed", "snap", "used", "used_now")

    def __init__(
        self,
        snap: ClusterSnapshot,
        alloc_now: NDArray[np.int64],
        used_now: NDArray[np.int64],
        alloc: list[list[int]],
        used: list[list[int]],
    ) -> None:
        self.snap, self.alloc_now, self.used_now = snap, alloc_now, used_now
        self.alloc, self.used = alloc, used
        self.changed: set[int] = set()


class _Simulation:
    def __init__(
        self, snap: ClusterSnapshot, destinations: Collection[str] | None, memo: RemovalMemo | None = None
    ) -> None:
        self.snap = snap
        self.memo = memo
        self.made: dict[str, _Attempt] = {}
        self.checker = memo.checker(snap) if memo is not None else FitChecker(snap)
        n = snap.num_slots
        if destinations is None:
            self.dest = snap.active.copy()
        else:
            self.dest = np.zeros(n, np.bool_)
            self.dest[snap.slots_of(destinations)] = True
        cordoned = np.array([c.unschedulable for c in snap.classes], np.bool_)
        self.dest &= ~cordoned[snap.node_class_ids]  # upstream skips cordoned nodes outright
        self.cursor = 0
        # Plain-integer copies of what the walk after the cursor reads per node (numpy's per-element
        # cost would be most of a walk's time): destinations, classes, allocatable and requested rows.
        # The arrays stay the truth; the rows follow every bind and are re-read after a revert. A
        # destination is always an active node, so the walk needs no active check.
        self._dest = self.dest.tolist()
        self._classes = snap.node_class_ids.tolist()
        self.changed: set[int] = set()  # slots whose plain requested row was changed (for the memo)
        if memo is not None:
            self._width = len(snap.resources)
            self._alloc, self._used = memo._plain_rows(snap)
        else:
            self._read_rows()

    def _read_rows(self) -> None:
        self._width = len(self.snap.resources)
        self._alloc = self.snap.allocatable.tolist()
        self._used = self.snap.requested.tolist()

    def _bound(self, slots: Sequence[int], counts: Sequence[int], need: list[tuple[int, int]]) -> None:
        """Follow binds of pods requesting ``need`` (``PodFacts.needs``) in the plain rows, ``counts[k]``
        of them on ``slots[k]`` (the snapshot's arrays are updated by the snapshot)."""
        used = self._used
        self.changed.update(slots)
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
        if self.memo is not None:
            attempt = self.memo._attempts.get(name)
            if attempt is not None and self._replay(attempt, i, pods):
                self.memo.replayed += 1
                self.made[name] = attempt
                return attempt.result
            self.memo.walked += 1
        start, was_dest = cursor, self._dest[i]
        near_only = self.memo is not None and snap.constrained_pods == 0  # record this attempt?
        groups: list[_Group] = []
        walked = widest = 0
        within: NDArray[np.bool_] | None = None  # the destinations but this node, for the full checks
        moved_to: list[str] = []  # the moves, flat (see RemovalResult)
        moved_counts: list[int] = []
        moved_pods: list[Pod] = []
        touched: list[int] = []  # slots bound to in this attempt: their rows are re-read if it fails
        checker, names = self.checker, snap.slot_names
        for group in group_pods(pods):
            facts = checker.facts(group.representative)
            vec = facts.vector(snap)
            if len(snap.resources) != self._width:
                self._read_rows()  # a resource column was added: rows before it are another width
                near_only = False
            if checker.is_simple(facts):
                need = facts.needs(snap)
                near = self._fill_near(facts, need, i, cursor, len(group.pods))
                if near is not None:
                    taken, after = near
                    snap.add_pods_each(taken, group.pods, vec)
                    self._bound(taken, [1] * len(taken), need)
                    touched.extend(taken)
                    moved_to.extend(map(names.__getitem__, taken))
                    moved_counts.extend([1] * len(taken))
                    moved_pods.extend(group.pods)
                    if near_only:
                        n = snap.num_slots
                        offsets = tuple(_offset(s, start, n) for s in taken)
                        groups.append((offsets, tuple(group.pods), vec, need))
                        walked += after - cursor if after > cursor else after - cursor + n
                        widest = max(widest, _near_width(len(group.pods)))
                        near_only = not facts.name_dependent
                    cursor = after
                    continue
                near_only = False
                if within is None:
                    within = self._within(i)
                filled = round_robin_fill(self.checker.capacity(facts, within), cursor, len(group.pods))
                if filled is None:
                    return self._failed(name, [*touched, i], group.representative.key)
                all_counts, cursor = filled
                slots = np.flatnonzero(all_counts)
                counts = all_counts[slots]
                snap.add_pods_bulk(slots, counts, group.pods, vec)
                self._bound(slots.tolist(), counts.tolist(), facts.needs(snap))
                touched.extend(slots.tolist())
                moved_to.extend(map(names.__getitem__, slots.tolist()))
                moved_counts.extend(counts.tolist())
                moved_pods.extend(group.pods[: int(counts.sum())])
                continue
            near_only = False
            need, one = facts.needs(snap), [1]
            for pod in group.pods:
                pick = self._walk_one(facts, i, cursor)
                if pick is None:  # none in the nodes just after the cursor: every node
                    if within is None:
                        within = self._within(i)
                    pick = _next_true(self.checker.feasible(facts, within), cursor)
                if pick is None:
                    return self._failed(name, [*touched, i], pod.key)
                snap.add_pod(pod, pick, vec)
                self._bound((pick,), one, need)
                touched.append(pick)
                moved_to.append(names[pick])
                moved_counts.append(1)
                moved_pods.append(pod)
                cursor = pick + 1 if pick + 1 < snap.num_slots else 0
        self._removed(i, cursor)
        result = RemovalResult(
            name, RemovalOutcome.REMOVABLE, tuple(moved_to), tuple(moved_counts), tuple(moved_pods)
        )
        if near_only and walked < snap.num_slots:
            self.made[name] = self._record(pods, start, walked, groups, widest, (i, was_dest), result)
        return result

    def _record(
        self,
        pods: list[Pod],
        start: int,
        walked: int,
        groups: list[_Group],
        widest: int,
        candidate: tuple[int, bool],
        result: RemovalResult,
    ) -> _Attempt:
        """The attempt just made, with the rows its walk read as they were before its own binds (and
        the candidate's destination flag, cleared by its removal, as it was)."""
        node, was_dest = candidate
        n = self.snap.num_slots
        used = [list(row) for row in _span(self._used, start, walked)]
        for offsets, _, _, needs in groups:
            for off in offsets:
                row = used[off]
                for c, v in needs:
                    row[c] -= v
        dest = _span(self._dest, start, walked)
        off = _offset(node, start, n)
        if off < walked:
            dest[off] = was_dest
        flat = [o for offs, _, _, _ in groups for o in offs]
        rows = [vec for offs, _, vec, _ in groups for _ in offs]
        return _Attempt(
            tuple(pods),
            _span(self.snap.slot_names, start, walked),
            dest,
            _span(self._classes, start, walked),
            _span(self._alloc, start, walked),
            used,
            np.array(flat, np.intp),
            tuple(p for _, moved, _, _ in groups for p in moved),
            np.array(rows, np.int64).reshape(len(rows), self._width),
            [needs for offs, _, _, needs in groups for _ in offs],
            _wrap(start, walked, n),
            widest,
            result,
        )

    def _replay(self, attempt: _Attempt, node: int, pods: list[Pod]) -> bool:
        """Apply ``attempt`` again if a fresh walk would repeat it exactly (see :class:`RemovalMemo`);
        False (nothing changed) if not."""
        snap = self.snap
        if len(pods) != len(attempt.pods) or any(map(operator.is_not, pods, attempt.pods)):
            return False
        n = snap.num_slots
        walked = len(attempt.names)
        if snap.constrained_pods or walked >= n or attempt.widest >= n or len(snap.resources) != self._width:
            return False
        start = self.cursor
        if (
            _span(snap.slot_names, start, walked) != attempt.names
            or _span(self._used, start, walked) != attempt.used
            or _span(self._dest, start, walked) != attempt.dest
            or _span(self._classes, start, walked) != attempt.classes
            or _span(self._alloc, start, walked) != attempt.alloc
        ):
            return False
        if _wrap(start, walked, n) != attempt.wrap:
            return False  # wrapped elsewhere: a fresh fill would pair a group's pods and slots otherwise
        if len(attempt.offsets):
            slots = attempt.offsets + start
            if attempt.wrap is not None:
                slots[slots >= n] -= n
            snap.add_pods_rows(slots, attempt.moved, attempt.rows)
            used = self._used
            listed = slots.tolist()
            self.changed.update(listed)
            for slot, needs in zip(listed, attempt.needs, strict=True):
                row = used[slot]
                for c, v in needs:
                    row[c] += v
        self._removed(node, start + walked if start + walked < n else start + walked - n)
        return True

    def _removed(self, i: int, cursor: int) -> None:
        """End an attempt that removes node ``i``: its moves are kept, the cursor moves on."""
        self.snap.remove_node(i)
        self.snap.commit()
        self.dest[i] = self._dest[i] = False
        self.cursor = cursor

    def _within(self, i: int) -> NDArray[np.bool_]:
        within = self.dest.copy()
        within[i] = False
        return within

    def _failed(self, name: str, touched: list[int], unplaced: str) -> RemovalResult:
        """Revert the attempt; ``touched`` (the slots bound to, and the candidate's, whose plain row a
        re-read in the attempt may have cleared) get their rows from the snapshot again."""
        self.snap.revert()
        requested = self.snap.requested
        for slot in touched:  # bound to in this call, so in self.changed already (or the candidate)
            self._used[slot] = requested[slot].tolist()
        return RemovalResult(name, RemovalOutcome.NO_PLACE_TO_MOVE_PODS, unplaced_pod=unplaced)

    def _fill_near(
        self, facts: PodFacts, need: list[tuple[int, int]], skip: int, cursor: int, pods: int
    ) -> tuple[list[int], int] | None:
        """:func:`round_robin_fill` when the nodes just after the cursor take every pod, one each
        (the usual case: a node's few pods of one group), walking only those nodes with plain
        integers: the slots (ascending, as the full fill lists them) and the new cursor. Node
        ``skip`` (the one being removed) takes none; ``need`` is ``facts.needs``. None: do the full
        fill."""
        n = self.snap.num_slots
        width = _near_width(pods)
        if width >= n:
            return None
        taken: list[int] = []
        for i in self._roomy(facts, need, skip, cursor, width):
            taken.append(i)
            if len(taken) == pods:
                return sorted(taken), (i + 1) % n
        return None

    def _walk_one(self, facts: PodFacts, skip: int, cursor: int) -> int | None:
        """The first node at or after the cursor (among the few just after it) that takes one pod of a
        template the full filters decide (inter-pod rules, ports), walked with plain integers as
        :meth:`_fill_near` walks; None: none of those nodes (ask every node)."""
        snap, checker = self.snap, self.checker
        n = snap.num_slots
        if n <= _NEAR:
            return None
        rules = checker.rules(facts)
        kept = facts.walk_tests  # the rules come back as the same objects while they hold
        if kept is not None and kept[0] is rules and kept[1] == n:
            tests = kept[2]
        else:
            tests = rules_tests(rules, n)
            facts.walk_tests = (rules, n, tests)
        ports = bool(facts.pod.host_ports)
        need = facts.needs(snap)
        dest, alloc, used, classes = self._dest, self._alloc, self._used, self._classes
        # _roomy's walk, inline (a generator's resumptions were a tenth of an affinity-heavy check),
        # each node that has room then tested by the rules.
        by_node = checker.static_ok if facts.name_dependent else None
        classes_ok = checker.class_ok(facts) if by_node is None else []
        for k in range(_NEAR):
            i = cursor + k if cursor + k < n else cursor + k - n
            if not dest[i] or i == skip:
                continue
            if not (by_node(facts, i) if by_node is not None else classes_ok[classes[i]]):
                continue
            room, spent = alloc[i], used[i]
            for c, v in need:
                if room[c] - spent[c] < v:
                    break
            else:
                if ports and not checker.local_fits(facts, i):
                    continue
                for test in tests:
                    if not test(i):
                        break
                else:
                    return i
        return None

    def _roomy(
        self, facts: PodFacts, need: list[tuple[int, int]], skip: int, cursor: int, width: int
    ) -> Iterator[int]:
        """The destinations among the ``width`` nodes from the cursor on (wrapping), node ``skip``
        (the one being removed) left out, that pass the static filters and have room for one pod
        requesting ``need`` (``PodFacts.needs``), in that order, from the plain-integer rows."""
        n = self.snap.num_slots
        dest, alloc, used, classes = self._dest, self._alloc, self._used, self._classes
        # Pods whose node selection names nodes are judged per node; the others per node class.
        by_node = self.checker.static_ok if facts.name_dependent else None
        classes_ok = self.checker.class_ok(facts) if by_node is None else []
        for k in range(width):
            i = cursor + k if cursor + k < n else cursor + k - n
            if not dest[i] or i == skip:
                continue
            if not (by_node(facts, i) if by_node is not None else classes_ok[classes[i]]):
                continue
            room, spent = alloc[i], used[i]
            for c, v in need:  # room_for_one, inline: this is the walk's innermost step
                if room[c] - spent[c] < v:
                    break
            else:
                yield i


def _span(rows: list[_T], start: int, length: int) -> list[_T]:
    """``length`` entries of a per-slot list from slot ``start`` on, wrapping past the last slot."""
    end = start + length
    n = len(rows)
    return rows[start:end] if end <= n else rows[start:] + rows[: end - n]


def _offset(slot: int, start: int, n: int) -> int:
    """How many slots after ``start`` (of ``n``, wrapping) ``slot`` is."""
    return slot - start if slot >= start else slot - start + n


def _wrap(start: int, length: int, n: int) -> int | None:
    """The offset from ``start`` at which ``length`` slots wrap past the last of ``n``, if they do."""
    return n - start if start + length > n else None


# How many nodes after the cursor the removal simulation's fill looks at first (at least, and per pod).
_NEAR = 32
_NEAR_PER_POD = 4


def _near_width(pods: int) -> int:
    return max(_NEAR, _NEAR_PER_POD * pods)


def _next_true(mask: NDArray[np.bool_], cursor: int) -> int | None:
    hits = np.flatnonzero(mask)
    if len(hits) == 0:
        return None
    k = int(np.searchsorted(hits, cursor))
    return int(hits[k]) if k < len(hits) else int(hits[0])


def _derive_keys(snap: ClusterSnapshot, candidates: Sequence[str]) -> None:
    """The equivalence keys of every candidate's pods, derived in one pass: pods of one template on
    different nodes then share one derivation (an attempt groups one node's pods at a time)."""
    slots = snap.slots_of(candidates).tolist()
    first = next((snap.pods_on(i) for i in slots if snap.pods_on(i)), ())
    if first and not all(map(has_equivalence_key, first)):  # derived already (a later loop): skip
        equivalence_keys([pod for i in slots for pod in snap.pods_on(i)])


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
    memo: RemovalMemo | None = None,
    on_removable: Callable[[RemovalResult], None] | None = None,
) -> ScaleDownCheck:
    """Try to remove ``candidates`` in order (``destinations`` default to every node present).

    Which pods must move is ``move`` per pod, or, when ``drain`` is given (for example
    ``lambda pods: drain_node(pods, ctx)``), the drainability rules, which can also block a node.
    With ``limit``, the candidates left once that many removable nodes were found (those ``counted``
    says count; all by default) are not tried: they have no result. ``memo``, passed again to the next
    call, lets attempts that would repeat exactly be replayed (the results are the same with or
    without it). ``on_removable`` hears of each removable node before the next candidate is tried
    (what it changes, such as the PDBs' remaining disruptions, can change ``drain``'s next answers).
    """
    if not candidates or (limit is not None and limit <= 0):
        return ScaleDownCheck(())  # nothing to try: no fork, no per-node setup
    if snap.constrained_pods and not keep:
        # Every pod's check reads the pod index: built before the fork, the fork's copy saves it and
        # the revert restores it wholesale, instead of telling it of every pod moved back.
        snap.pod_index()
    snap.fork(copy=not keep)  # hundreds of nodes' pods may move: restoring a copy beats undoing each
    try:
        if memo is not None:
            memo._begin(snap)
        sim = _Simulation(snap, destinations, memo)
        _derive_keys(snap, candidates)
        found: list[RemovalResult] = []
        removable = 0
        for name in candidates:
            if limit is not None and removable >= limit:
                break
            result = sim.try_remove(name, move, drain)
            found.append(result)
            if result.removable:
                if on_removable is not None:
                    on_removable(result)
                if counted is None or counted(name):
                    removable += 1
        results = tuple(found)
    except BaseException:
        snap.revert()
        if memo is not None:
            memo._rows = None  # its rows may have changed in ways not yet noted
        raise
    if keep:
        snap.commit()
    else:
        snap.revert()
    if memo is not None:
        memo._end(snap, sim.made, sim.changed)
    return ScaleDownCheck(results)
