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
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from kubetide.scheduling.pod_index import PodIndex
from kubetide.scheduling.reasons import FilterFailure

__all__ = ["DomainRule", "Rules", "kept_state", "rules_failure", "rules_fit", "rules_mask"]

BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class DomainRule:
    """``allowed[code]``: the verdict for a node in domain ``code`` of ``key``; ``fill``: for domains
    numbered after the rule was made (no pods there yet); ``missing``: for a node without the key.
    A node that fails reports ``failure`` (``missing_failure`` when it lacks the key)."""

    key: str
    allowed: BoolArray
    fill: bool
    missing: bool
    failure: FilterFailure
    missing_failure: FilterFailure

    def table(self, domains: int) -> BoolArray:
        """The verdict per domain code for ``domains`` codes, then one more for code -1 (no key)."""
        out = np.empty(domains + 1, np.bool_)
        known = min(len(self.allowed), domains)
        out[:known] = self.allowed[:known]
        out[known:domains] = self.fill
        out[domains] = self.missing
        return out

    def verdict(self, code: int) -> bool:
        if code < 0:
            return self.missing
        if code < len(self.allowed):
            return bool(self.allowed[code])
        return self.fill


Rules = tuple[DomainRule, ...]


def rules_mask(rules: Rules, index: PodIndex, start: int = 0) -> BoolArray:
    """Pass/fail of every slot from ``start`` on."""
    n = index.snap.num_slots
    ok = np.ones(n - start, np.bool_)
    for rule in rules:
        key = index.key(rule.key)
        ok &= rule.table(key.domains)[key.codes[start:n]]
    return ok


def rules_fit(rules: Rules, index: PodIndex, slot: int) -> bool:
    """Pass/fail of one slot."""
    return all(rule.verdict(int(index.key(rule.key).codes[slot])) for rule in rules)


def rules_failure(rules: Rules, index: PodIndex, slot: int) -> FilterFailure | None:
    """The first rule's failure at ``slot``, in the rules' order (upstream's order of checks)."""
    for rule in rules:
        code = int(index.key(rule.key).codes[slot])
        if not rule.verdict(code):
            return rule.missing_failure if code < 0 else rule.failure
    return None


_MAX_KEPT = 8192  # states kept per index; more pod templates than that start the cache afresh

_S = TypeVar("_S")


def kept_state(index: PodIndex, what: Hashable, make: Callable[[], _S]) -> _S:
    """The state named ``what`` (a filter and a pod template) kept in ``index``, made on first use.
    A state keeps its rules while what they were computed from is unchanged."""
    cache = index.cache
    state = cache.get(what)
    if state is None:
        if len(cache) >= _MAX_KEPT:
            cache.clear()
        state = cache[what] = make()
    return state  # type: ignore[return-value]
