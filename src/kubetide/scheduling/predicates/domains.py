"""Inter-pod filters as verdicts per topology domain, evaluated over many nodes at once or one node.

Topology spread and inter-pod (anti-)affinity both decide a node by the domain it is in: for each
constraint or term, whether the node's domain of its topology key is allowed, and what happens to a node
without the key. Their PreFilter state is therefore a tuple of :class:`DomainRule`: per rule, an allowed
flag per domain (computed from the pod index's counts), and a node passes the filter when every rule
allows its domain. A mask over nodes is then one gather per rule, and one node costs a few lookups.

States are kept per pod template in the snapshot's index (:func:`kept_state`), each keeping its rules
while what they were computed from (class versions, domains, node counts) is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.scheduling.pod_index import ClassCounts, PodIndex
from kubetide.scheduling.reasons import FilterFailure
from kubetide.scheduling.topology_key import TopologyKey

if TYPE_CHECKING:
    from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = [
    "DenyingRule",
    "DomainRule",
    "Rule",
    "RuleState",
    "Rules",
    "RulesFilter",
    "kept_state",
    "rules_failure",
    "rules_fit",
    "rules_mask",
    "rules_tests",
]

BoolArray = NDArray[np.bool_]


class DomainRule:
    """``allowed[code]``: the verdict for a node in domain ``code`` of ``topology``; ``fill``: for domains
    numbered after the rule was made (no pods there yet); ``missing``: for a node without the key.
    A node that fails reports ``failure`` (``missing_failure`` when it lacks the key). ``allowed`` may
    be plain booleans (few domains: numpy's per-call cost would be most of the work)."""

    __slots__ = (
        "_list",
        "_table",
        "_test",
        "allowed",
        "failure",
        "fill",
        "missing",
        "missing_failure",
        "topology",
    )

    def __init__(
        self,
        topology: TopologyKey,
        allowed: BoolArray | list[bool],
        fill: bool,
        missing: bool,
        failure: FilterFailure,
        missing_failure: FilterFailure,
    ) -> None:
        self.topology, self.allowed, self.fill, self.missing = topology, allowed, fill, missing
        self.failure, self.missing_failure = failure, missing_failure
        self._table: BoolArray | None = None
        self._list: list[bool] | None = None
        self._test: tuple[list[int], Callable[[int], bool]] | None = None

    @property
    def key(self) -> str:
        return self.topology.name

    def test(self, n: int) -> Callable[[int], bool]:
        """The verdict for one of the first ``n`` slots, with plain integers (kept while the codes are)."""
        codes = self.topology.codes_list(n)
        kept = self._test
        if kept is None or kept[0] is not codes:
            table = self.table_list(self.topology.domains)  # its last entry, index -1: no key
            kept = self._test = (codes, lambda slot: table[codes[slot]])
        return kept[1]

    def table_list(self, domains: int) -> list[bool]:
        """:meth:`table` as plain booleans (its last entry, index -1, is the missing key's)."""
        out = self._list
        if out is None or len(out) != domains + 1:
            allowed = self.allowed if isinstance(self.allowed, list) else self.allowed.tolist()
            out = self._list = [*allowed[:domains], *[self.fill] * (domains - len(allowed)), self.missing]
        return out

    def table(self, domains: int) -> BoolArray:
        """The verdict per domain code for ``domains`` codes, then one more for code -1 (no key)."""
        out = self._table
        if out is None or len(out) != domains + 1:
            if isinstance(self.allowed, list):
                out = np.array(self.table_list(domains), np.bool_)
            else:
                out = np.empty(domains + 1, np.bool_)
                known = min(len(self.allowed), domains)
                out[:known] = self.allowed[:known]
                out[known:domains] = self.fill
                out[domains] = self.missing
            self._table = out
        return out

    def apply(self, ok: BoolArray, index: PodIndex, start: int) -> None:
        """``ok &=`` the rule's verdict for every slot from ``start`` on."""
        key = self.topology
        n = index.snap.num_slots
        table = self.table(key.domains)
        if start or key.domains > _FEW_DOMAINS:
            ok &= table[key.codes[start:n]]
            return
        pattern = table.tobytes()  # few domains: few distinct tables, each gathered once
        mask = key.masks.get(pattern)
        if mask is None:
            if len(key.masks) >= _MASKS_PER_KEY:
                key.masks.clear()
            mask = key.masks[pattern] = table[key.codes[:n]]
        ok &= mask

    def failure_at(self, key: TopologyKey, slot: int) -> FilterFailure | None:
        code = int(key.codes[slot])
        if code < 0:
            return None if self.missing else self.missing_failure
        if code < len(self.allowed):
            return None if self.allowed[code] else self.failure
        return None if self.fill else self.failure


class DenyingRule:
    """Fails the nodes holding a pod of ``classes``, for a key whose every domain is one slot's (as
    hostnames are): a domain with such a pod is then exactly that pod's node. A node without the key
    passes. Live: it reads the classes' pods when asked, so it holds while the key keeps one slot per
    domain (``topology.shared == 0``), whatever is bound or unbound."""

    __slots__ = ("_test", "classes", "failure", "topology")

    def __init__(self, topology: TopologyKey, classes: list[ClassCounts], failure: FilterFailure) -> None:
        self.topology, self.classes, self.failure = topology, classes, failure
        self._test: tuple[list[int] | None, Callable[[int], bool]] | None = None

    def test(self, n: int) -> Callable[[int], bool]:
        """The verdict for one of the first ``n`` slots, with plain integers."""
        key = self.topology
        codes = key.codes_list(n) if key.unlabelled else None
        kept = self._test
        if kept is None or kept[0] is not codes:
            held = [c.slots for c in self.classes]
            if codes is not None:
                kept = (codes, lambda slot: codes[slot] < 0 or all(slot not in h for h in held))
            elif len(held) == 1:
                only = held[0]
                kept = (None, lambda slot: slot not in only)
            else:
                kept = (None, lambda slot: all(slot not in h for h in held))
            self._test = kept
        return kept[1]

    @property
    def key(self) -> str:
        return self.topology.name

    def apply(self, ok: BoolArray, index: PodIndex, start: int) -> None:
        key = self.topology
        for c in self.classes:
            if c.slots:
                slots = np.fromiter(c.slots, np.intp, len(c.slots))
                if start:
                    slots = slots[slots >= start]
                if key.unlabelled:  # pods on nodes without the key deny nothing
                    slots = slots[key.codes[slots] >= 0]
                ok[slots - start] = False

    def failure_at(self, key: TopologyKey, slot: int) -> FilterFailure | None:
        if key.codes[slot] >= 0 and any(slot in c.slots for c in self.classes):
            return self.failure
        return None


_FEW_DOMAINS = 64  # keys with at most this many domains keep their gathered masks per verdict table
_MASKS_PER_KEY = 64

Rule = DomainRule | DenyingRule
Rules = tuple[Rule, ...]


def rules_mask(rules: Rules, index: PodIndex, start: int = 0, within: BoolArray | None = None) -> BoolArray:
    """Pass/fail of every slot from ``start`` on (and, if given, in ``within``: a copy is changed)."""
    ok = np.ones(index.snap.num_slots - start, np.bool_) if within is None else within.copy()
    denied: set[tuple[str, tuple[int, ...]]] = set()
    for rule in rules:
        if isinstance(rule, DenyingRule):  # a pod's anti-affinity to its own kind denies the same twice
            ident = (rule.key, tuple(map(id, rule.classes)))
            if ident in denied:
                continue
            denied.add(ident)
        rule.apply(ok, index, start)
    return ok


def rules_fit(rules: Rules, index: PodIndex, slot: int) -> bool:
    """Pass/fail of one slot."""
    return all(rule.failure_at(rule.topology, slot) is None for rule in rules)


def rules_tests(rules: Rules, n: int) -> list[Callable[[int], bool]]:
    """Per rule, its verdict for one of the first ``n`` slots as a plain-integer test: for walks over a
    few nodes, where numpy's per-call cost would be most of the work."""
    return [rule.test(n) for rule in rules]


def rules_failure(rules: Rules, index: PodIndex, slot: int) -> FilterFailure | None:
    """The first rule's failure at ``slot``, in the rules' order (upstream's order of checks)."""
    for rule in rules:
        failure = rule.failure_at(rule.topology, slot)
        if failure is not None:
            return failure
    return None


class RulesFilter:
    """The dynamic-filter methods of a filter whose state is rules (see ``predicates.base``): the
    subclass gives ``state``."""

    def state(self, pod: Pod, snap: ClusterSnapshot) -> RuleState:
        raise NotImplementedError

    def mask(self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], start: int = 0) -> BoolArray:
        return rules_mask(self.state(pod, snap).current(), snap.pod_index(), start)

    def fits(self, pod: Pod, snap: ClusterSnapshot, slot: int, needs: list[tuple[int, int]]) -> bool:
        return rules_fit(self.state(pod, snap).current(), snap.pod_index(), slot)

    def failures(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], nodes: NDArray[np.intp]
    ) -> list[FilterFailure | None]:
        rules, index = self.state(pod, snap).current(), snap.pod_index()
        return [rules_failure(rules, index, int(i)) for i in nodes]


class RuleState(Protocol):
    """A filter's kept state for one pod template (see :func:`kept_state`)."""

    def current(self) -> Rules:
        """The rules as the snapshot is now (recomputed only where what they read has changed)."""
        ...


_MAX_KEPT = 8192  # states kept per index; more pod templates than that start the cache afresh

_S = TypeVar("_S")


def kept_state(index: PodIndex, what: Hashable, make: Callable[[], _S]) -> _S:
    """The state named ``what`` (a filter and a pod template) kept in ``index``, made on first use.
    A state keeps its rules while what they were computed from is unchanged."""
    cache = index.cache
    state = cache.get(what)
    if state is None:
        if len(cache) >= _MAX_KEPT:
            index.forget()
        state = cache[what] = make()
    found: _S = state
    return found
