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

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.scheduling.equivalence import equivalence_keys
from kubetide.scheduling.fit import FitChecker, PodFacts
from kubetide.scheduling.predicates.domains import rules_mask
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


class HintingSimulator:
    """Hints kept from one call to the next (one per filter of schedulable pods, as upstream's)."""

    def __init__(self) -> None:
        self._current: dict[str, str] = {}
        self._old: dict[str, str] = {}

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
        self.drop_old_hints()
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
