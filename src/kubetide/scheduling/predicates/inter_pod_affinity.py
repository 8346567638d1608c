"""InterPodAffinity, required terms only, with upstream's three checks in upstream's order:

1. the incoming pod's affinity: in the node's domain (per term's ``topologyKey``) some pod must match
   *all* of its terms; a node missing a topology key fails. Exception: when no pod anywhere matches
   and the pod matches its own terms, any node with the keys passes (the first pod of a set);
2. the incoming pod's anti-affinity: no pod matching a term in the node's domain;
3. existing pods' anti-affinity: no pod whose anti-affinity term matches the incoming pod may sit in
   the same domain (for the term's key) as the node.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import PodAffinityTerm
from kubetide.scheduling.reasons import FilterFailure, Reason
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["InterPodAffinity", "term_matches"]

Pair = tuple[str, str]


def term_matches(term: PodAffinityTerm, owner_namespace: str, target: Pod) -> bool:
    """Does ``target`` match ``term`` declared by a pod in ``owner_namespace``?"""
    return term.namespace_matches(owner_namespace, target.namespace) and term.selector.matches(target.labels)


class _State:
    def __init__(self, pod: Pod, snap: ClusterSnapshot) -> None:
        self.affinity: Counter[Pair] = Counter()
        self.anti: Counter[Pair] = Counter()
        self.existing_anti: Counter[Pair] = Counter()
        for i, other in snap.all_pods():
            labels = snap.labels(i)
            if pod.pod_affinity and all(term_matches(t, pod.namespace, other) for t in pod.pod_affinity):
                for t in pod.pod_affinity:
                    if t.topology_key in labels:
                        self.affinity[(t.topology_key, labels[t.topology_key])] += 1
            for t in pod.pod_anti_affinity:
                if t.topology_key in labels and term_matches(t, pod.namespace, other):
                    self.anti[(t.topology_key, labels[t.topology_key])] += 1
            for t in other.pod_anti_affinity:
                if t.topology_key in labels and term_matches(t, other.namespace, pod):
                    self.existing_anti[(t.topology_key, labels[t.topology_key])] += 1
        self.self_match = all(term_matches(t, pod.namespace, pod) for t in pod.pod_affinity)

    def failure(self, pod: Pod, labels: dict[str, str]) -> FilterFailure | None:
        if pod.pod_affinity:
            exists = True
            for t in pod.pod_affinity:
                if t.topology_key not in labels:
                    return _AFFINITY
                if self.affinity[(t.topology_key, labels[t.topology_key])] <= 0:
                    exists = False
            if not exists and not (not +self.affinity and self.self_match):
                return _AFFINITY
        for t in pod.pod_anti_affinity:
            if t.topology_key in labels and self.anti[(t.topology_key, labels[t.topology_key])] > 0:
                return _ANTI
        if +self.existing_anti and any(self.existing_anti[pair] > 0 for pair in labels.items()):
            return _EXISTING
        return None


_AFFINITY = FilterFailure("InterPodAffinity", (Reason.POD_AFFINITY.value,), unresolvable=True)
_ANTI = FilterFailure("InterPodAffinity", (Reason.POD_ANTI_AFFINITY.value,))
_EXISTING = FilterFailure("InterPodAffinity", (Reason.EXISTING_ANTI_AFFINITY.value,))


class InterPodAffinity:
    name = "InterPodAffinity"

    def applies(self, pod: Pod, snap: ClusterSnapshot) -> bool:
        return bool(pod.pod_affinity or pod.pod_anti_affinity or snap.constrained_pods)

    def mask(self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64]) -> NDArray[np.bool_]:
        state = _State(pod, snap)
        ok = np.ones(snap.num_slots, np.bool_)
        for i in range(snap.num_slots):
            if snap.active[i] and state.failure(pod, snap.labels(i)) is not None:
                ok[i] = False
        return ok

    def failures(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], nodes: NDArray[np.intp]
    ) -> list[FilterFailure | None]:
        state = _State(pod, snap)
        return [state.failure(pod, snap.labels(int(i))) for i in nodes]
