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

from functools import partial

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import PodAffinityTerm
from kubetide.scheduling.equivalence import equivalence_key
from kubetide.scheduling.label_class import LabelClass, label_class
from kubetide.scheduling.pod_index import ClassCounts, PodIndex
from kubetide.scheduling.predicates.domains import (
    DenyingRule,
    DomainRule,
    Rule,
    Rules,
    RulesFilter,
    RuleState,
    kept_state,
)
from kubetide.scheduling.reasons import FilterFailure, Reason
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.scheduling.topology_key import TopologyKey

__all__ = ["InterPodAffinity", "affinity_rules", "affinity_state", "term_matches"]

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
    """One pod template's rules, and what they were computed from."""

    __slots__ = (
        "_watched",
        "apart",
        "blocking",
        "index",
        "keys_of",
        "own",
        "pod",
        "rules",
        "stamp",
        "together",
    )

    def __init__(self, pod: Pod, index: PodIndex) -> None:
        self.pod, self.index = pod, index
        own = self.own = label_class(pod)
        ns, affinity = pod.namespace, pod.pod_affinity
        self.together: list[ClassCounts] = (
            index.selected(
                ("affinity", ns, affinity),
                affinity[0].selector,
                lambda c: all(_term_matches_class(t, ns, c) for t in affinity),
            )
            if affinity
            else []
        )
        self.apart = [
            index.selected(("anti", ns, t), t.selector, partial(_term_matches_class, t, ns))
            for t in pod.pod_anti_affinity
        ]
        self.blocking = index.blocking(own, lambda c: bool(_blocks(c, own)))
        self.keys_of: dict[int, list[str]] = {}  # per blocking class, the keys of its terms that match
        self._watched: tuple[int, list[tuple[TopologyKey, list[ClassCounts], FilterFailure]]] = (-1, [])
        self.stamp: object = None
        self.rules: Rules = ()

    def watched(self) -> list[tuple[TopologyKey, list[ClassCounts], FilterFailure]]:
        """The anti-affinity rules' keys and classes: the pod's own terms, then existing pods' terms
        matching it, grouped by key (kept while no class joins the lists)."""
        # The lists only grow, and only when a class joins the index: while none did, they are as they were.
        classes = len(self.index.classes)
        if self._watched[0] == classes:
            return self._watched[1]
        index = self.index
        out = [
            (index.key(t.topology_key), c, _ANTI)
            for t, c in zip(self.pod.pod_anti_affinity, self.apart, strict=True)
        ]
        by_key: dict[str, list[ClassCounts]] = {}
        for c in self.blocking:
            keys = self.keys_of.get(id(c))
            if keys is None:
                keys = self.keys_of[id(c)] = list(dict.fromkeys(_blocks(c.cls, self.own)))
            for key in keys:
                by_key.setdefault(key, []).append(c)
        out.extend((index.key(key), classes, _EXISTING) for key, classes in by_key.items())
        self._watched = (classes, out)
        return out

    def current(self) -> Rules:
        index = self.index
        watched = self.watched()
        if not self.together and self.stamp is watched:
            # Last made from these very lists when every key had one slot per domain: the rules then
            # read the classes' pods when asked, so they hold while that is so.
            for key, _, _ in watched:
                if key.shared:
                    break
            else:
                return self.rules
        # Live rules (keys with one slot per domain) read the classes' pods when asked: only their class
        # lists matter; the others are counts, computed from the classes' versions.
        stamp = (
            [c.version for c in self.together],
            [
                len(classes) if key.shared == 0 else [c.version for c in classes]  # (live: the list only)
                for key, classes, _ in watched
            ],
        )
        if stamp != self.stamp:
            pod = self.pod
            rules: list[Rule] = [*_affinity(pod, index, self.together)]
            rules.extend(_denying(index, key, classes, failure) for key, classes, failure in watched)
            self.rules = tuple(rules)
            live = not self.together and all(key.shared == 0 for key, _, _ in watched)
            self.stamp = watched if live else stamp
        return self.rules


def affinity_state(pod: Pod, snap: ClusterSnapshot) -> _AffinityState:
    """The filter's state for ``pod``'s template, kept in the snapshot's index."""
    index = snap.pod_index()
    return kept_state(index, ("affinity", equivalence_key(pod)), lambda: _AffinityState(pod, index))


def affinity_rules(pod: Pod, snap: ClusterSnapshot) -> Rules:
    """The filter's rules for ``pod``: affinity, then anti-affinity, then existing pods' anti-affinity."""
    return affinity_state(pod, snap).current()


def _affinity(pod: Pod, index: PodIndex, together: list[ClassCounts]) -> list[DomainRule]:
    terms = pod.pod_affinity
    counts = [index.domain_counts(together, t.topology_key) for t in terms]
    anywhere = any(c.any() for c in counts)
    if not anywhere and all(term_matches(t, pod.namespace, pod) for t in terms):
        # The first pod of a set: any node with every term's key.
        return [
            DomainRule(index.key(t.topology_key), np.ones(0, np.bool_), True, False, _AFFINITY, _AFFINITY)
            for t in terms
        ]
    return [
        DomainRule(index.key(t.topology_key), c > 0, False, False, _AFFINITY, _AFFINITY)
        for t, c in zip(terms, counts, strict=True)
    ]


def _denying(index: PodIndex, key: TopologyKey, classes: list[ClassCounts], failure: FilterFailure) -> Rule:
    """Fail the nodes in a domain holding a pod of ``classes``; a node without the key passes."""
    if key.shared == 0:  # one slot per domain: the nodes holding such pods
        return DenyingRule(key, classes, failure)
    counts = index.domain_counts(classes, key.name)
    return DomainRule(key, counts == 0, True, True, failure, failure)


class InterPodAffinity(RulesFilter):
    name = "InterPodAffinity"
    pod_decides = False  # bound pods' anti-affinity may reject any pod

    def applies(self, pod: Pod, snap: ClusterSnapshot) -> bool:
        return bool(pod.pod_affinity or pod.pod_anti_affinity or snap.constrained_pods)

    def may_apply(self, pod: Pod) -> bool:
        return True  # existing pods' anti-affinity may reject any pod

    def always_applies(self, pod: Pod) -> bool:
        return bool(pod.pod_affinity or pod.pod_anti_affinity)

    def state(self, pod: Pod, snap: ClusterSnapshot) -> RuleState:
        return affinity_state(pod, snap)
