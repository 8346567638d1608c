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

import weakref
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import PodAffinityTerm
from kubetide.model.selectors import LabelSelector
from kubetide.scheduling.equivalence import EquivalenceKey, equivalence_keys

if TYPE_CHECKING:
    from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["ClassCounts", "LabelClass", "PodIndex", "label_class"]

Int64Array = NDArray[np.int64]
_ATTR = "_kubetide_label_class"  # the pod's LabelClass, cached in its __dict__ like the equivalence key


class LabelClass:
    """What selectors and anti-affinity terms read of a pod; interned, so equal classes are one object."""

    __slots__ = ("__weakref__", "anti", "labels", "namespace", "terminating")

    def __init__(self, key: EquivalenceKey, terminating: bool) -> None:
        value = key.value  # see equivalence._signature
        self.namespace: str = value[1]
        self.labels: dict[str, str] = dict(value[2])
        self.anti: tuple[PodAffinityTerm, ...] = value[7]
        self.terminating = terminating


_INTERNED: weakref.WeakValueDictionary[tuple[EquivalenceKey, bool], LabelClass] = (
    weakref.WeakValueDictionary()
)


def _intern(key: EquivalenceKey, terminating: bool) -> LabelClass:
    found = _INTERNED.get((key, terminating))
    if found is None:
        found = _INTERNED[(key, terminating)] = LabelClass(key, terminating)
    return found


def label_class(pod: Pod) -> LabelClass:
    """The pod's label class (derived once, then read from the pod)."""
    found: LabelClass | None = pod.__dict__.get(_ATTR)
    if found is None:
        found = label_classes([pod])[0]
    return found


def label_classes(pods: Sequence[Pod]) -> list[LabelClass]:
    """Every pod's label class, derived once per equivalence key (and cached on each pod)."""
    try:
        return [pod.__dict__[_ATTR] for pod in pods]
    except KeyError:
        pass
    out = []
    for pod, key in zip(pods, equivalence_keys(list(pods)), strict=True):
        found = pod.__dict__.get(_ATTR)
        if found is None:
            found = pod.__dict__[_ATTR] = _intern(key, pod.deletion_time is not None)
        out.append(found)
    return out


class ClassCounts:
    """One label class's bound pods: per slot, and per domain of each key asked about."""

    __slots__ = ("cls", "domains", "slots", "version")

    def __init__(self, cls: LabelClass) -> None:
        self.cls = cls
        self.slots: dict[int, int] = {}
        self.domains: dict[str, Int64Array] = {}
        self.version = 0  # changes with every pod bound or unbound


class _Key:
    """One topology key: every slot's domain code, and the present nodes per domain."""

    __slots__ = ("codes", "name", "nodes", "presence", "values")

    def __init__(self, name: str, capacity: int) -> None:
        self.name = name
        self.values: dict[str, int] = {}
        self.codes = np.full(capacity, -1, np.int32)
        self.nodes = np.zeros(8, np.int64)
        self.presence = 0  # changes whenever a domain gains its first node or loses its last

    def count_node(self, code: int, delta: int) -> None:
        if code >= 0:
            before = self.nodes[code]
            self.nodes[code] = before + delta
            if not before or before + delta == 0:
                self.presence += 1

    def code(self, value: str | None) -> int:
        if value is None:
            return -1
        code = self.values.get(value)
        if code is None:
            code = self.values[value] = len(self.values)
            if code >= len(self.nodes):
                self.nodes = np.concatenate([self.nodes, np.zeros(len(self.nodes), np.int64)])
        return code

    @property
    def domains(self) -> int:
        return len(self.values)


class PodIndex:
    """Label classes of a snapshot's bound pods with their counts; see the module docstring."""

    def __init__(self, snap: ClusterSnapshot) -> None:
        self.snap = snap
        self._classes: dict[LabelClass, ClassCounts] = {}
        self.classes: list[ClassCounts] = []  # in order of first appearance
        self.anti_classes: list[ClassCounts] = []  # those whose pods carry required anti-affinity
        self._keys: dict[str, _Key] = {}
        self._active = snap.active.copy()
        self._matches: dict[Hashable, tuple[int, list[ClassCounts]]] = {}
        # Classes by label, and anti-affinity classes by a label their terms require (the first ``In``
        # requirement's values): a selector's candidates, without testing every class.
        self._by_label: dict[tuple[str, str], list[ClassCounts]] = {}
        self._anti_by_label: dict[tuple[str, str], list[ClassCounts]] = {}
        self._anti_anywhere: list[ClassCounts] = []  # anti-affinity classes with a term not indexed so
        self.layout = 0  # changes when a present node changes (labels, removed, truncated)
        self.version = 0  # changes with every change at all
        self.cache: dict[Hashable, Any] = {}  # per pod template and filter, the filter's state
        for i in range(snap.num_slots):
            pods = snap.pods_on(i)
            if pods:
                self.pods_added(i, pods)

    # ------------------------------------------------------------------ reading
    def key(self, name: str) -> _Key:
        """The key ``name`` (its codes and node counts), registered on first use."""
        key = self._keys.get(name)
        if key is None:
            snap = self.snap
            key = self._keys[name] = _Key(name, max(len(self._active), 16))
            self._code_slots(key, 0, snap.num_slots)
        return key

    def codes(self, name: str) -> NDArray[np.int32]:
        """Every slot's domain code for key ``name`` (-1: no such label), by slot."""
        return self.key(name).codes[: self.snap.num_slots]

    def matching(
        self,
        what: Hashable,
        test: Callable[[LabelClass], bool],
        candidates: Callable[[], Iterable[ClassCounts]] | None = None,
    ) -> list[ClassCounts]:
        """The classes ``test`` accepts, ``what`` naming the test (kept, and extended to new classes);
        ``candidates``: the only classes it could accept, to test at first instead of every class."""
        kept = self._matches.get(what)
        if kept is None:
            pool = self.classes if candidates is None else candidates()
            found = [c for c in pool if test(c.cls)]
        else:
            checked, found = kept
            if checked == len(self.classes):
                return found
            found = found + [c for c in self.classes[checked:] if test(c.cls)]
        self._matches[what] = (len(self.classes), found)
        return found

    def selected_by(self, selector: LabelSelector) -> list[ClassCounts]:
        """The classes ``selector`` could match: those with a value its first ``In`` requirement lists."""
        for r in selector.requirements:
            if r.operator == "In":
                return [c for value in r.values for c in self._by_label.get((r.key, value), ())]
        return self.classes

    def anti_candidates(self, cls: LabelClass) -> list[ClassCounts]:
        """The anti-affinity classes whose terms could match pods of ``cls`` (by the labels they require)."""
        found = {id(c): c for pair in cls.labels.items() for c in self._anti_by_label.get(pair, ())}
        found.update((id(c), c) for c in self._anti_anywhere)
        return list(found.values())

    def domain_counts(self, classes: Iterable[ClassCounts], name: str) -> Int64Array:
        """Pods of ``classes`` per domain of key ``name`` (length: the key's domains)."""
        key = self.key(name)
        total = np.zeros(key.domains, np.int64)
        for c in classes:
            counts = c.domains.get(name)
            if counts is None:
                counts = c.domains[name] = self._class_domains(c, key)
            elif len(counts) < key.domains:  # domains numbered since: no pods there
                counts = c.domains[name] = _padded(counts, len(key.nodes))
            total += counts[: key.domains]
        return total

    def slot_counts(self, classes: Iterable[ClassCounts]) -> Int64Array:
        """Pods of ``classes`` per slot."""
        total = np.zeros(self.snap.num_slots, np.int64)
        for c in classes:
            if c.slots:
                total[np.fromiter(c.slots, np.intp, len(c.slots))] += np.fromiter(
                    c.slots.values(), np.int64, len(c.slots)
                )
        return total

    def _class_domains(self, c: ClassCounts, key: _Key) -> Int64Array:
        counts = np.zeros(len(key.nodes), np.int64)
        for slot, n in c.slots.items():
            code = key.codes[slot]
            if code >= 0:
                counts[code] += n
        return counts

    # ------------------------------------------------------------------ pods
    def pods_added(self, slot: int, pods: Sequence[Pod]) -> None:
        self._pods_changed(slot, pods, 1)

    def pods_removed(self, slot: int, pods: Sequence[Pod]) -> None:
        self._pods_changed(slot, pods, -1)

    def pods_added_each(self, slots: Sequence[int], pods: Sequence[Pod]) -> None:
        """``pods[k]`` bound to ``slots[k]``."""
        for slot, pod in zip(slots, pods, strict=True):
            self._pods_changed(slot, (pod,), 1)

    def _pods_changed(self, slot: int, pods: Sequence[Pod], sign: int) -> None:
        if not pods:
            return
        self.version += 1
        classes = label_classes(pods)
        counts = Counter(classes).items() if len(classes) > 1 else ((classes[0], 1),)
        keys = self._keys
        for cls, n in counts:
            data = self._classes.get(cls)
            if data is None:
                data = self._new_class(cls)
            delta = sign * n
            left = data.slots.get(slot, 0) + delta
            if left:
                data.slots[slot] = left
            else:
                del data.slots[slot]
            data.version += 1
            for name, domains in data.domains.items():
                key = keys[name]
                code = key.codes[slot]
                if code >= 0:
                    if code >= len(domains):
                        domains = data.domains[name] = _padded(domains, len(key.nodes))
                    domains[code] += delta

    def _new_class(self, cls: LabelClass) -> ClassCounts:
        data = self._classes[cls] = ClassCounts(cls)
        self.classes.append(data)
        for pair in cls.labels.items():
            self._by_label.setdefault(pair, []).append(data)
        if cls.anti:
            self.anti_classes.append(data)
            for term in cls.anti:
                required = next((r for r in term.selector.requirements if r.operator == "In"), None)
                if required is None:
                    self._anti_anywhere.append(data)
                    break
                for value in required.values:
                    self._anti_by_label.setdefault((required.key, value), []).append(data)
        return data

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
            old = int(key.codes[slot])
            new = key.code(snap.label_value(slot, key.name))
            if was_active:
                key.count_node(old, -1)
            key.codes[slot] = new
            if active:
                key.count_node(new, 1)
            if old != new:
                for data, n in moved:
                    data.version += 1
                    domains = data.domains.get(key.name)
                    if domains is None:
                        continue
                    if len(domains) < len(key.nodes):
                        domains = data.domains[key.name] = _padded(domains, len(key.nodes))
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
                key.codes[slot] = -1
        self.version += 1
        self.layout += 1

    def _classes_of(self, pods: Sequence[Pod]) -> list[tuple[ClassCounts, int]]:
        return [(self._classes[cls], n) for cls, n in Counter(label_classes(pods)).items()]

    def _grow(self, need: int) -> None:
        cap = max(need, 2 * len(self._active))
        self._active = _padded(self._active, cap)
        for key in self._keys.values():
            if len(key.codes) < cap:
                key.codes = np.concatenate([key.codes, np.full(cap - len(key.codes), -1, np.int32)])

    def _code_slots(self, key: _Key, first: int, end: int) -> None:
        """Codes and node counts of the present slots ``first`` .. ``end - 1`` (without pods counted)."""
        if end > len(key.codes):
            key.codes = np.concatenate([key.codes, np.full(end - len(key.codes), -1, np.int32)])
        label_value, active = self.snap.label_value, self._active
        for slot in range(first, end):
            code = key.code(label_value(slot, key.name))
            key.codes[slot] = code
            if active[slot]:
                key.count_node(code, 1)


def _padded(array: NDArray[np.generic], length: int) -> NDArray[np.generic]:
    out = np.zeros(length, array.dtype)
    out[: len(array)] = array
    return out
