"""Bound pods by label class, counted per node and per topology domain, kept in step with a snapshot.

Inter-pod affinity and topology spread ask, for every pod they check, "how many pods matching this
selector sit in each domain of this topology key?". Walking every bound pod for each question made them
quadratic. The index answers from counts kept as pods are bound and unbound. Bound pods are grouped by
*label class*: what a selector or an anti-affinity term reads of a pod (namespace, labels, whether it
is terminating, its required anti-affinity terms), so a selector matches a whole class or none of it.
Each class keeps its pods per slot and, for each topology key asked about, per domain. A key numbers
its domains (label values) as it meets them; ``codes`` gives each slot's domain, -1 where the node lacks
the label, and ``nodes`` counts the present nodes per domain.

The snapshot reports each change to its index (pods bound or unbound, nodes added, relabelled,
removed, truncated) and drops the index where slots are renumbered; the index is built on first use.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector
from kubetide.scheduling.label_class import LabelClass, label_class, label_classes
from kubetide.scheduling.topology_key import TopologyKey, padded


class IndexedNodes(Protocol):
    """What the index reads of its snapshot (:class:`~kubetide.scheduling.snapshot.ClusterSnapshot`):
    a protocol, so that the snapshot can import the index and the index need not import it back."""

    @property
    def num_slots(self) -> int: ...

    @property
    def active(self) -> NDArray[np.bool_]: ...

    def pods_on(self, i: int) -> Sequence[Pod]: ...

    def label_value(self, i: int, key: str) -> str | None: ...


__all__ = ["ClassCounts", "IndexState", "IndexedNodes", "PodIndex"]

Int64Array = NDArray[np.int64]


class ClassCounts:
    """One label class's bound pods: per slot, and per domain of each key asked about."""

    __slots__ = ("cls", "domains", "slots", "version")

    def __init__(self, cls: LabelClass) -> None:
        self.cls = cls
        self.slots: dict[int, int] = {}
        self.domains: dict[str, Int64Array] = {}
        self.version = 0  # changes with every pod bound or unbound


class PodIndex:
    """Label classes of a snapshot's bound pods with their counts; see the module docstring."""

    def __init__(self, snap: IndexedNodes) -> None:
        self.snap = snap
        self._classes: dict[LabelClass, ClassCounts] = {}
        self.classes: list[ClassCounts] = []  # in order of first appearance
        self.anti_classes: list[ClassCounts] = []  # those whose pods carry required anti-affinity
        self._keys: dict[str, TopologyKey] = {}
        self._active = snap.active.copy()
        # Classes by label, and anti-affinity classes by a label their terms require (the first ``In``
        # requirement's values): a selector's candidates, without testing every class.
        self._by_label: dict[tuple[str, str], list[ClassCounts]] = {}
        self._anti_by_label: dict[tuple[str, str], list[ClassCounts]] = {}
        self._anti_anywhere: list[ClassCounts] = []  # anti-affinity classes with a term not indexed so
        # Live answers to "which classes does this selector (or this class's blockers) match": each kept
        # up to date as classes appear, registered where a new class would be tested (see _new_class).
        self._queries: dict[Hashable, _Query] = {}
        self._selectors_by_label: dict[tuple[str, str], list[_Query]] = {}
        self._selectors_anywhere: list[_Query] = []
        self._blockers_by_label: dict[tuple[str, str], list[_Query]] = {}
        self._blockers: list[_Query] = []
        self.layout = 0  # changes when a present node changes (labels, removed, truncated)
        self.version = 0  # changes with every change at all
        self.cache: dict[Hashable, Any] = {}  # per pod template and filter, the filter's state
        self.generation = 0  # changes when the kept queries and states are dropped (forget)
        self._bind_initial()

    def _bind_initial(self) -> None:
        """Every bound pod, counted per class and slot in array steps, with their classes derived in one
        pass (templates shared across nodes): what binding each slot's pods in turn counts."""
        snap = self.snap
        n = snap.num_slots
        lists = list(map(snap.pods_on, range(n)))
        sizes = np.fromiter(map(len, lists), np.intp, n)
        pods = list(itertools.chain.from_iterable(lists))
        if not pods:
            return
        classes = label_classes(pods)
        found = [self._new_class(cls) for cls in dict.fromkeys(classes)]  # in order of first appearance
        number = {c.cls: k for k, c in enumerate(found)}
        # One entry per (class, slot) with pods, ordered by class and then slot, with its pod count.
        pairs = np.fromiter(map(number.__getitem__, classes), np.int64, len(classes)) * n + np.repeat(
            np.arange(n, dtype=np.int64), sizes
        )
        pairs, counts = np.unique(pairs, return_counts=True)
        owners, slots = np.divmod(pairs, n)
        bounds = [*np.flatnonzero(np.diff(owners, prepend=-1)).tolist(), len(pairs)]
        slot_list, count_list = slots.tolist(), counts.tolist()
        for k, data in enumerate(found):
            start, end = bounds[k], bounds[k + 1]
            data.slots.update(zip(slot_list[start:end], count_list[start:end], strict=True))
            data.version += end - start  # as many changes as slots, as binding slot by slot counts
        self.version += int(np.count_nonzero(sizes))

    def forget(self) -> None:
        """Drop the kept queries and filter states (bounded memory where pod templates come and go)."""
        self.generation += 1
        self.cache.clear()
        self._queries.clear()
        self._selectors_by_label.clear()
        self._selectors_anywhere.clear()
        self._blockers_by_label.clear()
        self._blockers.clear()

    # ------------------------------------------------------------------ reading
    def key(self, name: str) -> TopologyKey:
        """The key ``name`` (its codes and node counts), registered on first use."""
        key = self._keys.get(name)
        if key is None:
            snap = self.snap
            key = self._keys[name] = TopologyKey(name, max(len(self._active), 16))
            self._code_slots(key, 0, snap.num_slots)
        return key

    def codes(self, name: str) -> NDArray[np.int32]:
        """Every slot's domain code for key ``name`` (-1: no such label), by slot."""
        return self.key(name).codes[: self.snap.num_slots]

    def selected(
        self, what: Hashable, selector: LabelSelector, test: Callable[[LabelClass], bool]
    ) -> list[ClassCounts]:
        """The classes ``test`` accepts, where ``test`` requires ``selector`` to match a class's labels;
        ``what`` names the test. The list is kept up to date as classes appear (do not change it)."""
        query = self._queries.get(what)
        if query is None:
            pairs = _required_pairs(selector)
            pool = self.classes if pairs is None else [c for p in pairs for c in self._by_label.get(p, ())]
            query = self._queries[what] = _Query(test, [c for c in pool if test(c.cls)])
            if pairs is None:
                self._selectors_anywhere.append(query)
            for pair in pairs or ():
                self._selectors_by_label.setdefault(pair, []).append(query)
        return query.found

    def blocking(self, own: LabelClass, test: Callable[[LabelClass], bool]) -> list[ClassCounts]:
        """The anti-affinity classes ``test`` accepts, where ``test`` requires one of their terms to match
        pods of class ``own``; kept up to date as classes appear (do not change it)."""
        what = ("blocking", own)
        query = self._queries.get(what)
        if query is None:
            candidates = {id(c): c for p in own.labels.items() for c in self._anti_by_label.get(p, ())}
            candidates.update((id(c), c) for c in self._anti_anywhere)
            query = self._queries[what] = _Query(test, [c for c in candidates.values() if test(c.cls)])
            self._blockers.append(query)
            for pair in own.labels.items():
                self._blockers_by_label.setdefault(pair, []).append(query)
        return query.found

    def domain_counts(self, classes: Sequence[ClassCounts], name: str) -> Int64Array:
        """Pods of ``classes`` per domain of key ``name`` (length: the key's domains; read only)."""
        key = self.key(name)
        domains = key.domains
        if len(classes) == 1:
            return self._class_domains(classes[0], key)[:domains]
        total = np.zeros(domains, np.int64)
        for c in classes:
            total += self._class_domains(c, key)[:domains]
        return total

    def _class_domains(self, c: ClassCounts, key: TopologyKey) -> Int64Array:
        counts = c.domains.get(key.name)
        if counts is None:
            counts = c.domains[key.name] = np.zeros(len(key.nodes), np.int64)
            if c.slots:
                held = len(c.slots)
                codes = key.codes[np.fromiter(c.slots, np.intp, held)]
                labelled = codes >= 0
                np.add.at(counts, codes[labelled], np.fromiter(c.slots.values(), np.int64, held)[labelled])
        elif len(counts) < key.domains:  # domains numbered since: no pods there
            counts = c.domains[key.name] = padded(counts, len(key.nodes))
        return counts

    def class_slots(self, classes: Iterable[ClassCounts], name: str) -> NDArray[np.intp]:
        """The slots holding pods of ``classes`` on nodes with key ``name``, ascending."""
        slots = sorted({slot for c in classes for slot in c.slots})
        found = np.array(slots, np.intp)
        return found[self.key(name).codes[found] >= 0] if len(found) else found

    def slot_counts(self, classes: Iterable[ClassCounts]) -> Int64Array:
        """Pods of ``classes`` per slot."""
        total = np.zeros(self.snap.num_slots, np.int64)
        for c in classes:
            if c.slots:
                total[np.fromiter(c.slots, np.intp, len(c.slots))] += np.fromiter(
                    c.slots.values(), np.int64, len(c.slots)
                )
        return total

    # ------------------------------------------------------------------ pods
    def pods_added(self, slot: int, pods: Sequence[Pod]) -> None:
        self._pods_changed(slot, pods, 1)

    def pods_removed(self, slot: int, pods: Sequence[Pod]) -> None:
        self._pods_changed(slot, pods, -1)

    def pods_added_each(self, slots: Sequence[int], pods: Sequence[Pod]) -> None:
        """``pods[k]`` bound to ``slots[k]``."""
        for slot, pod in zip(slots, pods, strict=True):
            self._pods_changed(slot, (pod,), 1)

    def _pods_changed(
        self, slot: int, pods: Sequence[Pod], sign: int, classes: list[LabelClass] | None = None
    ) -> None:
        if not pods:
            return
        self.version += 1
        if len(pods) == 1:
            counts: Iterable[tuple[LabelClass, int]] = ((label_class(pods[0]), 1),)
        else:
            counts = Counter(classes if classes is not None else label_classes(pods)).items()
        keys, known = self._keys, self._classes
        for cls, n in counts:
            data = known.get(cls)
            if data is None:
                data = self._new_class(cls)
            delta = sign * n
            held = data.slots
            left = held.get(slot, 0) + delta
            if left:
                held[slot] = left
            else:
                del held[slot]
            data.version += 1
            for name, domains in data.domains.items():
                key = keys[name]
                code = key.codes.item(slot)  # a plain integer: numpy's scalars cost more per use
                if code >= 0:
                    if code >= len(domains):
                        domains = data.domains[name] = padded(domains, len(key.nodes))
                    domains[code] += delta

    def _new_class(self, cls: LabelClass) -> ClassCounts:
        data = self._classes[cls] = ClassCounts(cls)
        self.classes.append(data)
        for pair in cls.labels.items():
            self._by_label.setdefault(pair, []).append(data)
            for query in self._selectors_by_label.get(pair, ()):
                query.offer(data)
        for query in self._selectors_anywhere:
            query.offer(data)
        if cls.anti:
            self.anti_classes.append(data)
            blockers: dict[int, _Query] = {}
            for term in cls.anti:
                pairs = _required_pairs(term.selector)
                if pairs is None:
                    self._anti_anywhere.append(data)
                    blockers = {id(q): q for q in self._blockers}
                    break
                for pair in pairs:
                    self._anti_by_label.setdefault(pair, []).append(data)
                    blockers.update((id(q), q) for q in self._blockers_by_label.get(pair, ()))
            for query in blockers.values():
                query.offer(data)
        return data

    # ------------------------------------------------------------------ saved states
    def save(self) -> IndexState:
        """What :meth:`restore` needs to bring the index back to now (for a snapshot's copy fork, whose
        revert would otherwise tell the index of every pod bound or unbound since, one by one)."""
        classes = [(c, dict(c.slots), {k: a.copy() for k, a in c.domains.items()}) for c in self.classes]
        keys = {
            name: (k.codes.copy(), k.nodes.copy(), k.holders.copy(), k.shared, k.unlabelled)
            for name, k in self._keys.items()
        }
        return IndexState(classes, keys, self._active.copy())

    def restore(self, state: IndexState) -> None:
        """Back to the state saved (the snapshot's slots and pods are back to theirs too). Classes and
        keys that appeared since stay, empty or recomputed: the filters' kept states refer to them."""
        self.version += 1
        self.layout += 1
        saved = {id(c): (slots, domains) for c, slots, domains in state.classes}
        for c in self.classes:
            slots, domains = saved.get(id(c), ({}, {}))
            c.slots.clear()  # in place: live rules hold these dicts
            c.slots.update(slots)
            for name in list(c.domains):
                if name in domains:
                    c.domains[name] = domains[name]
                else:
                    del c.domains[name]  # of a key registered since: counted again when asked
            c.version += 1
        self._active = state.active.copy()
        for name, key in list(self._keys.items()):
            kept = state.keys.get(name)
            if kept is None:  # registered since: numbered again from the snapshot
                del self._keys[name]
                self.key(name)
                continue
            codes, nodes, holders, shared, unlabelled = kept
            key.codes = codes.copy()
            key.nodes = padded(nodes, len(key.nodes))
            key.holders = padded(holders, len(key.holders))
            key.shared, key.unlabelled = shared, unlabelled
            key.presence += 1  # which domains have a node may have changed
            key.masks.clear()
            key._codes_list = None

    # ------------------------------------------------------------------ nodes
    def nodes_added(self, first: int, end: int) -> None:
        """Slots ``first`` .. ``end - 1`` were added (present, without pods)."""
        self.version += 1
        if end > len(self._active):
            self._grow(end)
        self._active[first:end] = True
        for key in self._keys.values():
            self._code_slots(key, first, end)

    def node_changed(self, slot: int, pods: Sequence[Pod]) -> None:
        """Slot ``slot``'s node was relabelled, removed or brought back; ``pods`` are the pods the index
        counts there (their domains move with the node's labels)."""
        self.version += 1
        self.layout += 1
        snap = self.snap
        active = bool(snap.active[slot])
        was_active = bool(self._active[slot])
        self._active[slot] = active
        moved = self._classes_of(pods) if pods else ()
        for key in self._keys.values():
            if was_active:
                key.count_node(int(key.codes[slot]), -1)
            old, new = key.set_code(slot, snap.label_value(slot, key.name))
            if active:
                key.count_node(new, 1)
            if old != new:
                for data, n in moved:
                    data.version += 1
                    domains = data.domains.get(key.name)
                    if domains is None:
                        continue
                    if len(domains) < len(key.nodes):
                        domains = data.domains[key.name] = padded(domains, len(key.nodes))
                    if old >= 0:
                        domains[old] -= n
                    if new >= 0:
                        domains[new] += n

    def truncating(self, n: int) -> None:
        """Slots from ``n`` on are about to go, with their pods."""
        snap = self.snap
        for slot in range(n, snap.num_slots):
            pods = snap.pods_on(slot)
            if pods:
                self.pods_removed(slot, pods)
            if self._active[slot]:
                for key in self._keys.values():
                    key.count_node(int(key.codes[slot]), -1)
            self._active[slot] = False
            for key in self._keys.values():
                key.release(slot)
        self.version += 1
        self.layout += 1

    def _classes_of(self, pods: Sequence[Pod]) -> list[tuple[ClassCounts, int]]:
        return [(self._classes[cls], n) for cls, n in Counter(label_classes(pods)).items()]

    def _grow(self, need: int) -> None:
        cap = max(need, 2 * len(self._active))
        self._active = padded(self._active, cap)
        for key in self._keys.values():
            if len(key.codes) < cap:
                key.codes = np.concatenate([key.codes, np.full(cap - len(key.codes), -1, np.int32)])

    def _code_slots(self, key: TopologyKey, first: int, end: int) -> None:
        """Codes and node counts of the present slots ``first`` .. ``end - 1`` (without pods counted)."""
        if end > len(key.codes):
            key.codes = np.concatenate([key.codes, np.full(end - len(key.codes), -1, np.int32)])
        label_value, active = self.snap.label_value, self._active
        for slot in range(first, end):
            code = key.assign(slot, label_value(slot, key.name))
            if active[slot]:
                key.count_node(code, 1)


@dataclass(frozen=True, slots=True)
class IndexState:
    """A :class:`PodIndex` as it was (see :meth:`PodIndex.save`)."""

    classes: list[tuple[ClassCounts, dict[int, int], dict[str, Int64Array]]]
    keys: dict[str, tuple[NDArray[np.int32], Int64Array, Int64Array, int, int]]
    active: NDArray[np.bool_]


class _Query:
    """One kept answer of :meth:`PodIndex.selected` or :meth:`PodIndex.blocking`."""

    __slots__ = ("found", "test")

    def __init__(self, test: Callable[[LabelClass], bool], found: list[ClassCounts]) -> None:
        self.test = test
        self.found = found

    def offer(self, data: ClassCounts) -> None:
        if self.test(data.cls):
            self.found.append(data)


def _required_pairs(selector: LabelSelector) -> list[tuple[str, str]] | None:
    """The labels one of which a class must have to match ``selector`` (its first ``In``
    requirement's); None when it names none (every class is a candidate)."""
    for r in selector.requirements:
        if r.operator == "In":
            return [(r.key, value) for value in r.values]
    return None
