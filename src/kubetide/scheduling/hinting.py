"""Which pending pods fit on the nodes of a snapshot, as Cluster Autoscaler's ``HintingSimulator`` decides
(``simulator/scheduling/hinting_simulator.go``), the simulation behind its filter of schedulable pods.

Pods are taken in order of priority, highest first, the input order kept among equals (upstream's
``sort.Slice`` leaves equal priorities as they are). Each pod tries first the node it was placed on by
the previous call or this one (its *hint*, kept for one call more, ``Hints.DropOld``), then the first
node that passes every filter. Once a pod owned by a controller fits nowhere, the same controller's
pods with the same labels and spec are not tried again in this call (``SimilarPodsScheduling``, at most
ten such specs per controller). Each pod placed is bound in the snapshot.

The first fit is taken in the snapshot's node order. Upstream walks a node list that its delta snapshot
rebuilds from a Go map after every binding, from a rotating index, so which fitting node it takes is
unspecified; the first fit packs as tightly, and is reproducible. Pods of identical templates keep
their static and node-local feasibility (ports, resources) between bindings (only the nodes bound
since are checked again), so a call costs one vectorized pass per template plus a scan per pod; for
pods that topology spread or inter-pod (anti-)affinity decide, the filters' per-domain rules (kept
from the snapshot's pod index) are applied to that mask per pod.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.scheduling.equivalence import equivalence_keys
from kubetide.scheduling.fit import FitChecker, PodFacts
from kubetide.scheduling.predicates.domains import rules_mask
from kubetide.scheduling.predicates.node_resources import pods_that_fit
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["HintingSimulator", "hint_key"]

MAX_SIMILAR_PER_CONTROLLER = 10  # upstream's maxPodsPerOwnerRef


def hint_key(pod: Pod) -> str:
    """``HintKeyFromPod``: the UID, else namespace/name."""
    return pod.uid or f"{pod.namespace}/{pod.name}"


def _controller_uid(pod: Pod) -> str | None:
    ref = pod.controller
    return None if ref is None else ref.uid or f"{ref.kind}/{ref.name}"


class _Feasible:
    """The nodes one template passes the static and node-local filters on (ports, resources), refreshed
    for the slots bound since it was computed: a bind changes those on its own node only."""

    __slots__ = ("base", "seen")

    def __init__(self, base: NDArray[np.bool_], seen: int) -> None:
        self.base = base
        self.seen = seen

    def refresh(self, checker: FitChecker, facts: PodFacts, bound: list[int]) -> NDArray[np.bool_]:
        if self.seen < len(bound):
            for slot in set(bound[self.seen :]):
                self.base[slot] = checker.local_fits(facts, slot)
            self.seen = len(bound)
        return self.base


@dataclass(frozen=True, slots=True, eq=False)
class _Plan:
    """A steady placement of try_schedule_alike's groups: each node's block of their pods, and what
    the block requests; with what it was checked against (the node classes and names at the slots)."""

    groups: tuple[Sequence[Pod], ...]
    classes: object
    slots: NDArray[np.intp]
    class_ids: NDArray[np.int32]
    names: list[str]
    blocks: list[list[Pod]]
    demand: NDArray[np.int64]


class HintingSimulator:
    """Hints kept from one call to the next (one per filter of schedulable pods, as upstream's)."""

    def __init__(self) -> None:
        self._current: dict[str, str] = {}
        self._old: dict[str, str] = {}
        # try_schedule_alike's hints: a group (by its first pod's key) -> (node, how many) it was on.
        self._groups: dict[str, list[tuple[str, int]]] = {}
        self._old_groups: dict[str, list[tuple[str, int]]] = {}
        self._plan: _Plan | None = None  # try_schedule_alike's last steady placement
        # The nodes try_schedule_alike bound to last call: (their pods' version, the pods).
        self._bound_last: dict[str, tuple[int, list[Pod]]] = {}

    def hint(self, pod: Pod) -> str | None:
        return self._hint(hint_key(pod))

    def _hint(self, key: str) -> str | None:
        found = self._current.get(key)
        return found if found is not None else self._old.get(key)

    def drop_old_hints(self) -> None:
        """``DropOldHints``: hints not renewed by this call are forgotten after the next one."""
        self._old = self._current
        self._current = {}

    def try_schedule(self, snap: ClusterSnapshot, pods: Sequence[Pod]) -> list[Pod]:
        """Bind every pod that fits into ``snap``; returns the pods bound, in the order they were."""
        placed = self._schedule(snap, pods)
        self.drop_old_hints()
        return placed

    def try_schedule_alike(
        self, snap: ClusterSnapshot, groups: Sequence[Sequence[Pod]]
    ) -> list[Sequence[Pod]]:
        """Bind groups of identical pods (one template each: a CapacityBuffer's fake pods), group after
        group, each group in bulk: as many as still fit go back to the nodes the group was on last
        time (its hint: the nodes and how many on each), the rest to the nodes that fit in the
        snapshot's node order, as many on each as it has room for (what first fit does with identical
        pods, hinted ones first). A group with inter-pod constraints or host ports is tried pod by pod.
        Returns each group's pods bound."""
        placed: list[Sequence[Pod]] = []
        checker = FitChecker.of(snap)
        touched: set[int] = set()
        again = self._as_last_time(snap, checker, groups, touched)
        if again is not None:
            self._same_as_last_time(snap, touched)
            self.drop_old_hints()
            self._old_groups, self._groups = self._groups, {}
            return again
        for pods in groups:
            if not pods:
                placed.append(())
                continue
            facts = checker.facts(pods[0])
            if checker.is_simple(facts) and not pods[0].host_ports:
                placed.append(self._schedule_alike(snap, checker, facts, pods, touched))
            else:
                placed.append(self._schedule(snap, pods))
        self._same_as_last_time(snap, touched)
        self.drop_old_hints()
        self._old_groups, self._groups = self._groups, {}
        return placed

    def _as_last_time(
        self, snap: ClusterSnapshot, checker: FitChecker, groups: Sequence[Sequence[Pod]], touched: set[int]
    ) -> list[Sequence[Pod]] | None:
        """The steady state in one array step: every group goes where it was last time, all of it, when
        those nodes still take them all together (so each group, in turn, finds room on its hint nodes
        for all its pods: the answer of the group-by-group placement). None when not so."""
        plan = self._plan
        if (
            plan is not None
            and len(plan.groups) == len(groups)
            and all(map(operator.is_, plan.groups, groups))
            and plan.classes is snap.classes
            and snap.constrained_pods == 0
            and np.array_equal(snap.node_class_ids[plan.slots], plan.class_ids)
            and bool(snap.active[plan.slots].all())
            and list(map(snap.name, plan.slots.tolist())) == plan.names
        ):
            # The very same groups on the very same nodes as last call (their static filters passed
            # then, on nodes of the same classes): only the room is checked again.
            return self._bind_plan(snap, plan, touched)
        self._plan = None
        index = snap.slot_index
        rows: list[tuple[int, int, int]] = []  # (slot, group, count), groups in order
        vecs: list[NDArray[np.int64] | None] = []
        for g, pods in enumerate(groups):
            if not pods:
                vecs.append(None)
                continue
            facts = checker.facts(pods[0])
            last = self._groups.get(hint_key(pods[0])) or self._old_groups.get(hint_key(pods[0]))
            if not checker.is_simple(facts) or pods[0].host_ports or not last:
                return None
            if sum(count for _, count in last) != len(pods):
                return None
            static = checker.static_mask(facts)
            for name, count in last:
                slot = index.get(name)
                if slot is None or not static[slot]:
                    return None
                rows.append((slot, g, count))
            vecs.append(facts.vector(snap))
        if not rows:
            return None
        width = len(snap.resources)
        table = np.array(rows, np.int64)
        order = np.argsort(table[:, 0], kind="stable")  # by slot, groups in order within a slot
        table = table[order]
        need = np.stack([vecs[g] for g in table[:, 1].tolist()]) * table[:, 2:3]
        slots, first = np.unique(table[:, 0], return_index=True)
        demand = np.add.reduceat(need, first, axis=0) if len(need) else np.zeros((0, width), np.int64)
        bounds = [*first.tolist(), len(table)]
        starts = [0] * len(groups)
        blocks: list[list[Pod]] = []
        for k in range(len(slots)):
            block: list[Pod] = []
            for _, g, count in table[bounds[k] : bounds[k + 1]].tolist():
                start = starts[g]
                block.extend(groups[g][start : start + count])
                starts[g] = start + count
            blocks.append(block)
        slots = slots.astype(np.intp)
        plan = _Plan(
            tuple(groups),
            snap.classes,
            slots,
            snap.node_class_ids[slots].copy(),
            list(map(snap.name, slots.tolist())),
            blocks,
            demand,
        )
        self._plan = plan
        return self._bind_plan(snap, plan, touched)

    def _bind_plan(self, snap: ClusterSnapshot, plan: _Plan, touched: set[int]) -> list[Sequence[Pod]] | None:
        free = snap.allocatable[plan.slots] - snap.requested[plan.slots]
        if not np.all((plan.demand <= free) | (plan.demand == 0)):
            self._plan = None
            return None
        snap.add_pod_blocks(plan.slots, plan.blocks, plan.demand)
        touched.update(plan.slots.tolist())
        for pods in plan.groups:
            if pods:
                key = hint_key(pods[0])
                self._groups[key] = self._groups.get(key) or self._old_groups[key]
        return list(plan.groups)

    def _same_as_last_time(self, snap: ClusterSnapshot, touched: set[int]) -> None:
        """A node whose pods came out the very same as last call gets last call's pods version back,
        so what later steps keep by version (utilization, emptiness, eligibility) is kept."""
        last, now = self._bound_last, {}
        for slot in touched:
            name = snap.name(slot)
            before = last.get(name)
            if before is not None and snap.reuse_version(slot, before[0], before[1]):
                now[name] = before
            else:
                now[name] = (snap.pods_version(slot), list(snap.pods_on(slot)))
        self._bound_last = now

    def _schedule_alike(
        self,
        snap: ClusterSnapshot,
        checker: FitChecker,
        facts: PodFacts,
        pods: Sequence[Pod],
        touched: set[int],
    ) -> Sequence[Pod]:
        vec = facts.vector(snap)
        static = checker.static_mask(facts)
        cols = np.flatnonzero(vec)
        key = hint_key(pods[0])
        last = self._groups.get(key) or self._old_groups.get(key)
        taken: dict[int, int] = {}
        done = 0
        if last:
            index = snap.slot_index
            pairs = [(index.get(name, -1), count) for name, count in last]
            slots = np.array([s for s, _ in pairs], np.intp)
            wanted = np.array([c for _, c in pairs], np.int64)
            keep = slots >= 0
            keep[keep] = static[slots[keep]]
            slots, wanted = slots[keep], wanted[keep]
            if len(slots):
                free = snap.allocatable[np.ix_(slots, cols)] - snap.requested[np.ix_(slots, cols)]
                room = np.maximum((free // vec[cols]).min(axis=1), 0)
                counts = np.minimum(room, wanted)
                ends = np.cumsum(counts)
                over = int(np.searchsorted(ends, len(pods)))  # where the group runs out
                counts[over + 1 :] = 0
                if over < len(counts):
                    counts[over] -= int(ends[over]) - len(pods)
                used = counts > 0
                slots, counts = slots[used], counts[used]
                done = int(counts.sum())
                if done:
                    snap.add_pods_bulk(slots, counts, pods[:done], vec)
                    taken.update(zip(slots.tolist(), counts.tolist(), strict=True))
        rest = pods[done:]
        if rest:
            counts = np.where(static, pods_that_fit(snap, vec), 0)
            ends = np.cumsum(counts)
            over = int(np.searchsorted(ends, len(rest)))
            counts[over + 1 :] = 0
            if over < len(counts):
                counts[over] -= int(ends[over]) - len(rest)
            slots = np.flatnonzero(counts)
            if len(slots):
                more = counts[slots]
                snap.add_pods_bulk(slots, more, rest[: int(more.sum())], vec)
                for slot, count in zip(slots.tolist(), more.tolist(), strict=True):
                    taken[slot] = taken.get(slot, 0) + count
                done += int(more.sum())
        self._groups[key] = [(snap.name(slot), count) for slot, count in taken.items()]
        touched.update(taken)
        return pods[:done]

    def _schedule(self, snap: ClusterSnapshot, pods: Sequence[Pod]) -> list[Pod]:
        ordered = sorted(pods, key=_minus_priority)  # stable: equal priorities keep their order
        keys = equivalence_keys(ordered)  # derived once per template, not pod by pod
        checker = FitChecker.of(snap)
        runs: dict[PodFacts, _Feasible] = {}
        bound: list[int] = []
        similar: dict[str, set[object]] = {}
        placed: list[Pod] = []
        epoch = (snap.node_epoch, snap.pods_epoch)
        for pod, key in zip(ordered, keys, strict=True):
            if (snap.node_epoch, snap.pods_epoch) != epoch:
                runs.clear()  # changed by something else: start over
            facts = checker.facts_of(key, pod)
            hinted = hint_key(pod)
            slot = self._hinted_slot(snap, checker, facts, hinted)
            if slot is None:
                owner = _controller_uid(pod)
                if owner is not None and key in similar.get(owner, ()):
                    continue
                ok = self._feasible(snap, checker, facts, runs, bound)
                if not ok.any():
                    controller = pod.controller
                    if owner is not None and controller is not None and controller.kind != "DaemonSet":
                        specs = similar.setdefault(owner, set())
                        if len(specs) < MAX_SIMILAR_PER_CONTROLLER:
                            specs.add(key)
                    continue
                slot = int(np.argmax(ok))
            self._current[hinted] = snap.name(slot)
            snap.add_pod(pod, slot, facts.vector(snap))
            bound.append(slot)
            epoch = (snap.node_epoch, snap.pods_epoch)
            placed.append(pod)
        return placed

    def _hinted_slot(
        self,
        snap: ClusterSnapshot,
        checker: FitChecker,
        facts: PodFacts,
        hinted: str,
    ) -> int | None:
        name = self._hint(hinted)
        if name is None or not snap.has_node(name):
            return None
        slot = snap.index_of(name)
        return slot if checker.fits(facts, slot) else None

    @staticmethod
    def _feasible(
        snap: ClusterSnapshot,
        checker: FitChecker,
        facts: PodFacts,
        runs: dict[PodFacts, _Feasible],
        bound: list[int],
    ) -> NDArray[np.bool_]:
        run = runs.get(facts)
        if run is None:
            run = runs[facts] = _Feasible(checker.local_mask(facts), len(bound))
        base = run.refresh(checker, facts, bound)
        if not facts.inter_pod and not snap.constrained_pods:
            return base  # no inter-pod filter applies
        rules = checker.rules(facts)  # topology spread, inter-pod affinity: they read every domain
        if not rules:
            return base
        return rules_mask(rules, snap.pod_index(), within=base)


def _minus_priority(pod: Pod) -> int:
    return -pod.priority
