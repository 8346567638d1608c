"""PodTopologySpread (``whenUnsatisfiable: DoNotSchedule`` constraints only; ``ScheduleAnyway`` only scores).

For each constraint, count the pods matching its selector (plus ``matchLabelKeys``) in the incoming
pod's namespace, not terminating, per topology domain, over the *eligible* nodes: nodes carrying every
constraint's topology key that pass the inclusion policies (node affinity honoured by default, taints
ignored by default). A node is rejected when ``count(domain) + selfMatch - globalMin > maxSkew``; the
global minimum is taken over the domains with an eligible node, and as 0 while fewer than
``minDomains`` (default 1) such domains exist. A node without the topology key is rejected as
unresolvable ("missing required label"). (``podtopologyspread/filtering.go``: ``calPreFilterState``,
``Filter``, ``minMatchNum``.)

The counts come from the snapshot's pod index: per domain of the key, summed over the label classes
the selector matches. Where every node with the key is eligible (no inclusion policy excludes one and
no second key is required), the index's per-domain counts and node counts are the answer as they
stand; otherwise the eligible nodes are worked out and counted per slot.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import TopologySpreadConstraint
from kubetide.model.selectors import LabelSelector, Requirement
from kubetide.scheduling.equivalence import equivalence_key
from kubetide.scheduling.label_class import LabelClass
from kubetide.scheduling.pod_index import ClassCounts, PodIndex
from kubetide.scheduling.predicates.base import name_dependent
from kubetide.scheduling.predicates.domains import (
    DomainRule,
    Rules,
    RulesFilter,
    RuleState,
    kept_state,
)
from kubetide.scheduling.predicates.node_affinity import matches_node_selection
from kubetide.scheduling.predicates.taint_toleration import first_untolerated_taint
from kubetide.scheduling.reasons import FilterFailure, Reason
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["PodTopologySpread", "hard_constraints", "spread_rules", "spread_state"]

BoolArray = NDArray[np.bool_]

_MISSING = FilterFailure("PodTopologySpread", (Reason.TOPOLOGY_SPREAD_LABEL.value,), unresolvable=True)
_SKEW = FilterFailure("PodTopologySpread", (Reason.TOPOLOGY_SPREAD.value,))


def hard_constraints(pod: Pod) -> tuple[TopologySpreadConstraint, ...]:
    return tuple(c for c in pod.topology_spread if c.when_unsatisfiable == "DoNotSchedule")


def _selector(pod: Pod, c: TopologySpreadConstraint) -> LabelSelector:
    extra = tuple(Requirement(k, "In", (pod.labels[k],)) for k in c.match_label_keys if k in pod.labels)
    return LabelSelector(c.selector.requirements + extra) if extra else c.selector


def _counted(namespace: str, selector: LabelSelector) -> Callable[[LabelClass], bool]:
    def counted(cls: LabelClass) -> bool:
        return not cls.terminating and cls.namespace == namespace and selector.matches(cls.labels)

    return counted


def _every_keyed_node_eligible(pod: Pod, constraints: tuple[TopologySpreadConstraint, ...]) -> bool:
    """True when the eligible nodes are exactly the present nodes with the (single) key: the index's
    per-domain counts then need no per-node filtering."""
    if len({c.topology_key for c in constraints}) != 1:
        return False
    selects = bool(pod.node_selector) or pod.required_node_affinity is not None
    return all(
        c.node_taints_policy == "Ignore" and not (selects and c.node_affinity_policy == "Honor")
        for c in constraints
    )


class _SpreadState:
    """One pod template's rules, and what they were computed from (to keep them while it holds)."""

    __slots__ = (
        "_by_counts",
        "constraints",
        "index",
        "keys",
        "limits",
        "matched",
        "pod",
        "rules",
        "selectors",
        "simple",
        "snap",
        "stamp",
    )

    def __init__(self, pod: Pod, snap: ClusterSnapshot, index: PodIndex) -> None:
        self.pod, self.snap, self.index = pod, snap, index
        self.constraints = hard_constraints(pod)
        self.selectors = [_selector(pod, c) for c in self.constraints]
        # maxSkew less selfMatch: the domain's count may exceed the global minimum by this much.
        self.limits = [
            c.max_skew - int(s.matches(pod.labels))
            for c, s in zip(self.constraints, self.selectors, strict=True)
        ]
        self.keys = [index.key(c.topology_key) for c in self.constraints]
        self.simple = _every_keyed_node_eligible(pod, self.constraints)
        ns = pod.namespace
        self.matched = [index.selected(("spread", ns, s), s, _counted(ns, s)) for s in self.selectors]
        self.stamp: Hashable = None
        self.rules: Rules = ()
        # Rules by the counts they were made from: a template's counts come back to the same few
        # (a pod moved out of a domain and back), and so its rules and their kept tests.
        self._by_counts: dict[Hashable, Rules] = {}

    def current(self) -> Rules:
        index = self.index
        if self.simple:
            # The rules are a function of the counts per domain and which domains have a node: kept by
            # those (a template's counts come back to the same few as its pods move out and back).
            if len(self.keys) == 1:
                key = self.keys[0]
                seen: Hashable = (index.domain_counts(self.matched[0], key.name).tobytes(), key.presence)
            else:
                seen = tuple(
                    (index.domain_counts(m, k.name).tobytes(), k.presence)
                    for m, k in zip(self.matched, self.keys, strict=True)
                )
            rules = self._by_counts.get(seen)
            if rules is None:
                rules = self._made(seen, self._counts_as_stated(index))
            return rules
        versions = [c.version for classes in self.matched for c in classes]
        stamp = (versions, [(k.domains, k.presence) for k in self.keys], index.layout, self.snap.num_slots)
        if stamp != self.stamp:
            counted = _eligible_counts(self.pod, self.snap, index, self.constraints, self.matched)
            self.rules = self._rules([(n.tolist(), p.tolist()) for n, p in counted])
            self.stamp = stamp
        return self.rules

    def _counts_as_stated(self, index: PodIndex) -> list[tuple[list[int], list[bool]]]:
        """Per constraint, the pods per domain and which domains have a node (every node with the key
        is eligible)."""
        return [
            (index.domain_counts(m, k.name).tolist(), (k.nodes[: k.domains] > 0).tolist())
            for m, k in zip(self.matched, self.keys, strict=True)
        ]

    def _made(self, seen: Hashable, counted: list[tuple[list[int], list[bool]]]) -> Rules:
        if len(self._by_counts) >= 16:
            self._by_counts.clear()
        rules = self._by_counts[seen] = self._rules(counted)
        return rules

    def _rules(self, counted: list[tuple[list[int], list[bool]]]) -> Rules:
        made = []
        for key, c, skew, (per_domain, present) in zip(
            self.keys, self.constraints, self.limits, counted, strict=True
        ):
            # Plain integers: a handful of domains (zones) is the common case, where numpy's per-call
            # cost would be most of the work.
            seen = (
                [n for n, p in zip(per_domain, present, strict=True) if p] if False in present else per_domain
            )
            low = min(seen) if seen and len(seen) >= (c.min_domains or 1) else 0
            limit = skew + low  # a domain's count must not exceed it
            allowed = [n <= limit for n in per_domain]
            made.append(DomainRule(key, allowed, limit >= 0, False, _SKEW, _MISSING))
        return tuple(made)


def spread_state(pod: Pod, snap: ClusterSnapshot) -> _SpreadState:
    """The filter's state for ``pod``'s template, kept in the snapshot's index."""
    index = snap.pod_index()
    return kept_state(index, ("spread", equivalence_key(pod)), lambda: _SpreadState(pod, snap, index))


def spread_rules(pod: Pod, snap: ClusterSnapshot) -> Rules:
    """The filter's rules for ``pod``: one per hard constraint, in the pod's order."""
    return spread_state(pod, snap).current()


def _eligible_counts(
    pod: Pod,
    snap: ClusterSnapshot,
    index: PodIndex,
    constraints: tuple[TopologySpreadConstraint, ...],
    matched: list[list[ClassCounts]],
) -> list[tuple[NDArray[np.int64], BoolArray]]:
    """Counts and domains over the eligible nodes, node by node (inclusion policies, several keys)."""
    n = snap.num_slots
    keyed = snap.active.copy()
    for c in constraints:
        keyed &= index.codes(c.topology_key) >= 0
    classes_ids = snap.node_class_ids
    if name_dependent(pod):  # the node selection reads node names: node by node
        selected = np.array(
            [matches_node_selection(pod, snap.name(i), snap.labels(i)) for i in range(n)], np.bool_
        )
    else:
        per_class = [matches_node_selection(pod, "", cls.label_map) for cls in snap.classes]
        selected = np.array(per_class, np.bool_)[classes_ids]
    tolerated = np.array(
        [first_untolerated_taint(pod, cls.taints) is None for cls in snap.classes], np.bool_
    )[classes_ids]
    out = []
    for c, classes in zip(constraints, matched, strict=True):
        eligible = keyed.copy()
        if c.node_affinity_policy == "Honor":
            eligible &= selected
        if c.node_taints_policy == "Honor":
            eligible &= tolerated
        key = index.key(c.topology_key)
        codes = key.codes[:n]
        per_slot = index.slot_counts(classes)
        counts = np.bincount(codes[eligible], per_slot[eligible], key.domains).astype(np.int64)
        present = np.bincount(codes[eligible], minlength=key.domains) > 0
        out.append((counts, present))
    return out


class PodTopologySpread(RulesFilter):
    name = "PodTopologySpread"
    pod_decides = True  # the pod's own constraints, whatever is bound

    def applies(self, pod: Pod, snap: ClusterSnapshot) -> bool:
        return bool(pod.topology_spread) and self.may_apply(pod)

    def may_apply(self, pod: Pod) -> bool:
        return any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.topology_spread)

    def always_applies(self, pod: Pod) -> bool:
        return self.may_apply(pod)

    def state(self, pod: Pod, snap: ClusterSnapshot) -> RuleState:
        return spread_state(pod, snap)
