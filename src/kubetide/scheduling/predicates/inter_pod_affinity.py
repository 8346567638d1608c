"""InterPodAffinity, required terms only, with upstream's three checks in upstream's order
(``interpodaffinity/filtering.go``: ``satisfyPodAffinity``, ``satisfyPodAntiAffinity``,
``satisfyExistingPodsAntiAffinity``):

1. the incoming pod's affinity: in the node's domain (per term's ``topologyKey``) some pod must match
   *all* of its terms; a node missing a topology key fails. Exception: when no pod matching all terms
   sits on a node with any of the terms' keys, and the pod matches its own terms, any node with the keys
   passes (the first pod of a set);
2. the incoming pod's anti-affinity: no pod matching a term in the node's domain;
3. existing pods' anti-affinity: no pod whose anti-affinity term matches the incoming pod may sit in
   the same domain (for the term's key) as the node.

Each check becomes per-domain rules (:mod:`.domains`) from the pod index's counts: the label classes a
term matches, their pods per domain of the term's key.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import PodAffinityTerm
from kubetide.scheduling.equivalence import equivalence_key
from kubetide.scheduling.pod_index import ClassCounts, LabelClass, PodIndex, label_class
from kubetide.scheduling.predicates.domains import (
    DomainRule,
    Rules,
    kept_state,
    rules_failure,
    rules_fit,
    rules_mask,
)
from kubetide.scheduling.reasons import FilterFailure, Reason
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["InterPodAffinity", "affinity_rules", "term_matches"]

BoolArray = NDArray[np.bool_]

_AFFINITY = FilterFailure("InterPodAffinity", (Reason.POD_AFFINITY.value,), unresolvable=True)
_ANTI = FilterFailure("InterPodAffinity", (Reason.POD_ANTI_AFFINITY.value,))
_EXISTING = FilterFailure("InterPodAffinity", (Reason.EXISTING_ANTI_AFFINITY.value,))


def term_matches(term: PodAffinityTerm, owner_namespace: str, target: Pod) -> bool:
    """Does ``target`` match ``term`` declared by a pod in ``owner_namespace``?"""
    return term.namespace_matches(owner_namespace, target.namespace) and term.selector.matches(target.labels)


def _term_matches_class(term: PodAffinityTerm, owner_namespace: str, cls: LabelClass) -> bool:
    return term.namespace_matches(owner_namespace, cls.namespace) and term.selector.matches(cls.labels)


def _blocks(cls: LabelClass, target: LabelClass) -> list[str]:
    """The topology keys of ``cls``'s anti-affinity terms that match pods of class ``target``."""
    return [t.topology_key for t in cls.anti if _term_matches_class(t, cls.namespace, target)]


class _AffinityState:
    """One pod template's rules, and the class versions they were computed from."""

    __slots__ = ("apart", "blocking", "checked", "own", "pod", "rules", "stamp", "together")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.own = label_class(pod)
        self.together: list[ClassCounts] = []
        self.apart: list[list[ClassCounts]] = []
        self.blocking: list[ClassCounts] = []
        self.checked = -1  # how many of the index's classes the lists have seen
        self.stamp: list[int] | None = None
        self.rules: Rules = ()

    def current(self, index: PodIndex) -> Rules:
        if self.checked != len(index.classes):
            self._match(index)
            self.checked = len(index.classes)
        stamp = [c.version for classes in (self.together, *self.apart, self.blocking) for c in classes]
        if stamp != self.stamp:
            pod = self.pod
            rules = [
                *_affinity(pod, index, self.together),
                *_anti(index, pod.pod_anti_affinity, self.apart),
                *_existing(index, self.own, self.blocking),
            ]
            self.rules = tuple(rules)
            self.stamp = stamp
        return self.rules

    def _match(self, index: PodIndex) -> None:
        pod, own = self.pod, self.own
        ns, affinity = pod.namespace, pod.pod_affinity
        if affinity:
            self.together = index.matching(
                ("affinity", ns, affinity),
                lambda c: all(_term_matches_class(t, ns, c) for t in affinity),
                lambda: index.selected_by(affinity[0].selector),
            )
        self.apart = [
            index.matching(
                ("anti", ns, t),
                lambda c, t=t: _term_matches_class(t, ns, c),
                lambda t=t: index.selected_by(t.selector),
            )
            for t in pod.pod_anti_affinity
        ]
        self.blocking = index.matching(
            ("existing", own), lambda c: bool(_blocks(c, own)), lambda: index.anti_candidates(own)
        )


def affinity_rules(pod: Pod, snap: ClusterSnapshot) -> Rules:
    """The filter's state for ``pod``: affinity rules, then anti-affinity, then existing pods' anti-affinity."""
    index = snap.pod_index()
    return kept_state(index, ("affinity", equivalence_key(pod)), lambda: _AffinityState(pod)).current(index)


def _affinity(pod: Pod, index: PodIndex, together: list[ClassCounts]) -> list[DomainRule]:
    terms = pod.pod_affinity
    counts = [index.domain_counts(together, t.topology_key) for t in terms]
    anywhere = any(c.any() for c in counts)
    if not anywhere and all(term_matches(t, pod.namespace, pod) for t in terms):
        # The first pod of a set: any node with every term's key.
        return [
            DomainRule(t.topology_key, np.ones(0, np.bool_), True, False, _AFFINITY, _AFFINITY) for t in terms
        ]
    return [
        DomainRule(t.topology_key, c > 0, False, False, _AFFINITY, _AFFINITY)
        for t, c in zip(terms, counts, strict=True)
    ]


def _anti(
    index: PodIndex, terms: tuple[PodAffinityTerm, ...], apart: list[list[ClassCounts]]
) -> list[DomainRule]:
    rules = []
    for t, classes in zip(terms, apart, strict=True):
        counts = index.domain_counts(classes, t.topology_key)
        rules.append(DomainRule(t.topology_key, counts == 0, True, True, _ANTI, _ANTI))
    return rules


def _existing(index: PodIndex, own: LabelClass, blocking: list[ClassCounts]) -> list[DomainRule]:
    by_key: dict[str, list[ClassCounts]] = {}
    for c in blocking:
        if c.slots:
            for key in _blocks(c.cls, own):
                by_key.setdefault(key, []).append(c)
    rules = []
    for key, classes in by_key.items():
        counts = index.domain_counts(classes, key)
        rules.append(DomainRule(key, counts == 0, True, True, _EXISTING, _EXISTING))
    return rules


class InterPodAffinity:
    name = "InterPodAffinity"

    def applies(self, pod: Pod, snap: ClusterSnapshot) -> bool:
        return bool(pod.pod_affinity or pod.pod_anti_affinity or snap.constrained_pods)

    def mask(self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], start: int = 0) -> BoolArray:
        return rules_mask(affinity_rules(pod, snap), snap.pod_index(), start)

    def fits(self, pod: Pod, snap: ClusterSnapshot, slot: int, needs: list[tuple[int, int]]) -> bool:
        return rules_fit(affinity_rules(pod, snap), snap.pod_index(), slot)

    def failures(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], nodes: NDArray[np.intp]
    ) -> list[FilterFailure | None]:
        rules, index = affinity_rules(pod, snap), snap.pod_index()
        return [rules_failure(rules, index, int(i)) for i in nodes]
