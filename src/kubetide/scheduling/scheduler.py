"""The simulator's kube-scheduler: binds pending pods to nodes with the same filters the autoscalers
simulate, and explains the pods it cannot bind in kube-scheduler's words.

Pods are taken in scheduling-queue order (higher priority first, then older first, then input order).
For each pod: filter every node, score the feasible ones with ``LeastAllocated`` over cpu and memory
(integer math as upstream, zero requests counted as 100m / 200Mi as upstream's non-zero defaults), and
pick the best, ties broken by a seeded random choice, so a run is reproducible for a seed. Bindings go
straight into the snapshot, so calls compose incrementally.

A pod that fits nowhere gets upstream's ``FitError`` message, ``0/N nodes are available: <counts>.``,
followed by the default preemption plugin's verdict when preemption could not help any node
(``preemption: 0/N nodes are available: ...``). Where evicting lower-priority pods *would* make room,
upstream would nominate a node and its message has no preemption part; we produce that message, but
we do not evict (preemption is not simulated).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, MEMORY
from kubetide.scheduling.fit import FitChecker, PodFacts
from kubetide.scheduling.predicates.node_resources import room_for_one
from kubetide.scheduling.reasons import FilterFailure, Reason, count_reasons, unschedulable_message
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["Placement", "ScheduleResult", "Scheduler", "Unschedulable"]

_DEFAULT_CPU = 100  # millicores, upstream's DefaultMilliCPURequest (scoring only)
_DEFAULT_MEMORY = 200 * 1024 * 1024  # upstream's DefaultMemoryRequest (scoring only)
_MAX_SCORE = 100


@dataclass(frozen=True, slots=True)
class Placement:
    pod: Pod
    node: str


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """A pod left pending, with its ``PodScheduled=False, reason=Unschedulable`` message."""

    pod: Pod
    message: str
    reasons: tuple[tuple[str, int], ...]  # reason → number of nodes, sorted by reason


@dataclass(frozen=True, slots=True)
class ScheduleResult:
    placements: tuple[Placement, ...]
    unschedulable: tuple[Unschedulable, ...]


def queue_order(pods: Iterable[Pod]) -> list[Pod]:
    """kube-scheduler's ``PrioritySort``: priority descending, then creation time ascending."""
    return sorted(pods, key=lambda p: (-p.priority, p.creation_time if p.creation_time is not None else 0.0))


class Scheduler:
    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def schedule(self, snap: ClusterSnapshot, pods: Iterable[Pod], *, explain: bool = True) -> ScheduleResult:
        """Bind what fits (in queue order) into ``snap``; explain the rest.

        ``explain=False`` skips the ``FitError`` message (a per-node diagnosis and preemption dry run)
        for callers that only need to know what fits, such as CA's filter of schedulable pods: the
        unschedulable pods come back with an empty message.
        """
        checker = FitChecker(snap)
        placements: list[Placement] = []
        pending: list[Unschedulable] = []
        failed: dict[object, Unschedulable] = {}  # simple groups fail alike once one pod failed
        # Feasibility and scores per equivalence group, kept while only this call's own bindings
        # change the snapshot: resuming a group refreshes just the nodes bound since its last pod.
        runs: dict[PodFacts, _Run] = {}
        bound: list[int] = []  # the slots this call bound pods to, in order
        epoch = (snap.node_epoch, snap.pods_epoch)
        for pod in queue_order(pods):
            if (snap.node_epoch, snap.pods_epoch) != epoch:  # changed by something else: start over
                runs.clear()
            facts = checker.facts(pod)
            known = failed.get(facts)
            if known is not None:
                pending.append(Unschedulable(pod, known.message, known.reasons))
                continue
            run = runs.get(facts)
            if run is not None and checker.is_simple(facts):
                ok, scores = run.refresh(snap, facts, bound)
            else:
                ok = checker.feasible(facts)
                scores = None
                if ok.any() and _resources_only(facts, checker, snap):
                    scores = np.full(len(ok), -1, np.int64)
                    nodes = np.flatnonzero(ok)
                    scores[nodes] = least_allocated(snap, pod, nodes)
                    runs[facts] = _Run(checker.static_mask(facts), ok.copy(), scores, len(bound))
                    ok, scores = runs[facts].ok, runs[facts].scores
            if ok.any():
                if scores is not None:
                    slot = self._pick_scored(scores)
                else:
                    slot = self._pick(snap, facts, np.flatnonzero(ok))
                snap.add_pod(pod, slot, facts.vector(snap))
                bound.append(slot)
                epoch = (snap.node_epoch, snap.pods_epoch)
                placements.append(Placement(pod, snap.name(slot)))
                continue
            runs.pop(facts, None)
            verdict = (
                explain_unschedulable(snap, checker, facts, pod) if explain else Unschedulable(pod, "", ())
            )
            if checker.is_simple(facts):
                failed[facts] = verdict
            pending.append(verdict)
        return ScheduleResult(tuple(placements), tuple(pending))

    def _pick_scored(self, scores: NDArray[np.int64]) -> int:
        """The same choice as :meth:`_pick` from kept scores (-1 marks infeasible nodes)."""
        best = np.flatnonzero(scores == scores.max())
        return int(best[0]) if len(best) == 1 else int(self.rng.choice(best.tolist()))

    def _pick(self, snap: ClusterSnapshot, facts: PodFacts, nodes: NDArray[np.intp]) -> int:
        if len(nodes) == 1:
            return int(nodes[0])
        scores = least_allocated(snap, facts.pod, nodes)
        best = nodes[scores == scores.max()]
        return int(best[0]) if len(best) == 1 else int(self.rng.choice(best.tolist()))


def _resources_only(facts: PodFacts, checker: FitChecker, snap: ClusterSnapshot) -> bool:
    """True when binding one pod changes nothing but that node's free resources for the next one
    (no host ports, no inter-pod constraints, none in the cluster): its feasibility and score can
    then be kept and refreshed for just that node."""
    return checker.is_simple(facts) and not facts.pod.host_ports


class _Run:
    """Feasibility and scores of one equivalence group of resource-only pods, from the pod before.

    Binding a pod changes nothing but its node's free resources for such pods, so the nodes bound
    since (by any group) are the only ones to look at again: fit on resources within the group's
    static mask (unchanged while the node set is), and the score.
    """

    __slots__ = ("ok", "scores", "seen", "static")

    def __init__(
        self, static: NDArray[np.bool_], ok: NDArray[np.bool_], scores: NDArray[np.int64], seen: int
    ) -> None:
        self.static = static
        self.ok = ok
        self.scores = scores
        self.seen = seen  # how many of the call's bindings are reflected in ok and scores

    def refresh(
        self, snap: ClusterSnapshot, facts: PodFacts, bound: list[int]
    ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
        if self.seen == len(bound) - 1:
            # One node bound since (the common case: this group's previous pod): plain integers,
            # where numpy's per-call overhead would cost ten times the arithmetic.
            slot = bound[-1]
            self.seen = len(bound)
            alloc = snap.allocatable[slot].tolist()
            used = snap.requested[slot].tolist()
            fits = bool(self.static[slot]) and room_for_one(alloc, used, facts.needs(snap))
            self.ok[slot] = fits
            self.scores[slot] = least_allocated_one(snap, facts.pod, alloc, used) if fits else -1
        elif self.seen < len(bound):
            fresh = bound[self.seen :]
            slots = np.unique(np.array(fresh, np.intp)) if len(fresh) > 1 else np.array(fresh, np.intp)
            self.seen = len(bound)
            vec = facts.vector(snap)
            cols = np.flatnonzero(vec)
            free = snap.allocatable[np.ix_(slots, cols)] - snap.requested[np.ix_(slots, cols)]
            fits = np.all(free >= vec[cols], axis=1) & self.static[slots]
            self.ok[slots] = fits
            self.scores[slots] = np.where(fits, least_allocated(snap, facts.pod, slots), -1)
        return self.ok, self.scores


def least_allocated(snap: ClusterSnapshot, pod: Pod, nodes: NDArray[np.intp]) -> NDArray[np.int64]:
    """Upstream's ``LeastAllocated`` score (0..100) with equal cpu and memory weights."""
    total = np.zeros(len(nodes), np.int64)
    for name, default in ((CPU, _DEFAULT_CPU), (MEMORY, _DEFAULT_MEMORY)):
        col = snap.column(name)
        alloc = snap.allocatable[nodes, col]
        requested = snap.requested[nodes, col] + (pod.requests[name] or default)
        safe = np.where(alloc > 0, alloc, 1)
        score = np.where((alloc > 0) & (requested <= alloc), (alloc - requested) * _MAX_SCORE // safe, 0)
        total += score
    result: NDArray[np.int64] = total // 2
    return result


def least_allocated_one(snap: ClusterSnapshot, pod: Pod, alloc: list[int], used: list[int]) -> int:
    """:func:`least_allocated` of one node, from its allocatable and requested rows as integers."""
    total = 0
    for name, default in ((CPU, _DEFAULT_CPU), (MEMORY, _DEFAULT_MEMORY)):
        col = snap.column(name)
        a = alloc[col]
        requested = used[col] + (pod.requests[name] or default)
        if a > 0 and requested <= a:
            total += (a - requested) * _MAX_SCORE // a
    return total // 2


def explain_unschedulable(
    snap: ClusterSnapshot, checker: FitChecker, facts: PodFacts, pod: Pod
) -> Unschedulable:
    """The ``FitError`` for a pod that fits no node, with the preemption dry run's verdict."""
    nodes = snap.active_indices()
    failures = checker.diagnose(facts, nodes)
    counts = count_reasons(failures)
    preemption = _preemption_counts(snap, checker, facts, pod, nodes, failures)
    message = unschedulable_message(len(nodes), counts, preemption)
    return Unschedulable(pod, message, tuple(sorted(counts.items())))


def _preemption_counts(
    snap: ClusterSnapshot,
    checker: FitChecker,
    facts: PodFacts,
    pod: Pod,
    nodes: NDArray[np.intp],
    failures: Sequence[FilterFailure | None],
) -> Counter[str] | None:
    """Per-node outcome of upstream's preemption dry run; None when evicting would help somewhere."""
    counts: Counter[str] = Counter()
    for i, failure in zip(nodes.tolist(), failures, strict=True):
        if failure is None or failure.unresolvable:
            counts[Reason.PREEMPTION_NOT_HELPFUL.value] += 1
            continue
        victims = [p for p in snap.pods_on(i) if p.priority < pod.priority]
        if not victims:
            counts[Reason.NO_PREEMPTION_VICTIMS.value] += 1
            continue
        snap.fork()
        try:
            for victim in victims:
                snap.remove_pod(victim, i)
            after = checker.diagnose(facts, np.array([i], np.intp))[0]
        finally:
            snap.revert()
        if after is None:
            return None
        counts.update(after.reasons)
    return counts
