"""Which nodes can take a pod, and how many identical pods each node can take: the filter pipeline
evaluated over all nodes at once.

A :class:`FitChecker` is bound to one snapshot and caches, per equivalence key, the facts that do not
change while pods are placed: the request row and the static filters' answer per node class (or per
node, for pods whose node selection names nodes). Dynamic filters run only when they apply: a pod
without host ports, inter-pod (anti-)affinity or hard topology spread, in a snapshot where no bound pod
carries anti-affinity, needs nothing but the vectorized resource check; for such *simple* pods
:meth:`FitChecker.capacity` answers "how many more of these fit on each node" in one division. The
inter-pod filters answer as per-domain rules (:meth:`FitChecker.rules`, from the snapshot's pod index),
so one node (:meth:`FitChecker.fits`) or a range of nodes (:meth:`FitChecker.feasible_from`, the
estimator's new nodes) is asked about without a mask over every node.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.scheduling.equivalence import EquivalenceKey, equivalence_key
from kubetide.scheduling.pod_index import PodIndex
from kubetide.scheduling.predicates import DOMAIN_FILTERS, DYNAMIC_FILTERS, LOCAL_FILTERS, STATIC_FILTERS
from kubetide.scheduling.predicates.base import DomainFilter, name_dependent, uses_inter_pod_constraints
from kubetide.scheduling.predicates.domains import Rules, RuleState, rules_fit, rules_mask
from kubetide.scheduling.predicates.node_resources import pods_that_fit, room_for_one
from kubetide.scheduling.reasons import FilterFailure
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["FitChecker", "PodFacts"]

BoolArray = NDArray[np.bool_]
_MAX_KEPT_FACTS = 4096


class PodFacts:
    """What the filters need about one pod (standing for its equivalence group)."""

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.name_dependent = name_dependent(pod)
        self.inter_pod = uses_inter_pod_constraints(pod)
        self._vec: NDArray[np.int64] | None = None
        self._needs: list[tuple[int, int]] | None = None
        self.class_failures: list[FilterFailure | None] = []
        self.class_ok = np.zeros(0, np.bool_)
        self.class_ok_list: list[bool] = []  # class_ok as plain booleans (see FitChecker.class_ok)
        self.node_cache: tuple[int, BoolArray, list[FilterFailure | None]] | None = None
        # The inter-pod filters' kept states for this template, with the index (and its generation)
        # they belong to: FitChecker.rules asks them for the rules as the snapshot is now.
        self.domain_states: tuple[PodIndex, int, dict[str, RuleState]] | None = None
        self.domain_filters: list[DomainFilter] | None = None
        self.filters_always_apply = False  # each of domain_filters applies whatever the snapshot
        self.walk_tests: tuple[Rules, int, list[Callable[[int], bool]]] | None = None  # the removal walk's
        self.joined_rules: tuple[list[Rules], Rules] | None = None  # the last parts and their join

    def vector(self, snap: ClusterSnapshot) -> NDArray[np.int64]:
        if self._vec is None or len(self._vec) != len(snap.resources):
            self._vec = snap.vector(self.pod.requests)
            self._needs = None
        return self._vec

    def needs(self, snap: ClusterSnapshot) -> list[tuple[int, int]]:
        """The request as (column, amount) pairs for the columns it asks for (the pods one included)."""
        vec = self.vector(snap)
        if self._needs is None:
            self._needs = [(c, int(vec[c])) for c in np.flatnonzero(vec).tolist()]
        return self._needs


def static_failure(
    pod: Pod, node_name: str, labels: dict[str, str], snap: ClusterSnapshot, cid: int
) -> FilterFailure | None:
    cls = snap.classes[cid]
    for f in STATIC_FILTERS:
        failure = f.check(pod, node_name, labels, cls.taints, cls.unschedulable)
        if failure is not None:
            return failure
    return None


class FitChecker:
    """Filters evaluated against one snapshot (which may change between calls)."""

    def __init__(self, snap: ClusterSnapshot) -> None:
        self.snap = snap
        self._facts: dict[object, PodFacts] = {}
        self._classes = snap.classes  # the list the facts' per-class answers are numbered by

    @classmethod
    def of(cls, snap: ClusterSnapshot) -> FitChecker:
        """A checker kept with ``snap`` for the calls that ask about the same pod templates again (each
        group's estimate, each filter of schedulable pods). Its facts hold while the snapshot's node
        classes are only appended to (``drop_unused_classes`` renumbers them into a new list); bounded,
        as pods of templates that come and go would otherwise pile up facts."""
        kept: FitChecker | None = snap.__dict__.get("_kept_checker")
        if kept is None or kept._classes is not snap.classes or kept.known > _MAX_KEPT_FACTS:
            kept = snap.__dict__["_kept_checker"] = cls(snap)
        return kept

    def facts(self, pod: Pod) -> PodFacts:
        return self.facts_of(equivalence_key(pod), pod)

    def facts_of(self, key: EquivalenceKey, pod: Pod) -> PodFacts:
        """:meth:`facts` of ``pod`` whose equivalence key the caller has at hand."""
        facts = self._facts.get(key)
        if facts is None:
            facts = self._facts[key] = PodFacts(pod)
        return facts

    @property
    def known(self) -> int:
        """How many pod templates (equivalence keys) have facts here."""
        return len(self._facts)

    def is_simple(self, facts: PodFacts) -> bool:
        """True when only resources and static filters decide, so identical pods can be batched."""
        return not facts.inter_pod and self.snap.constrained_pods == 0

    # ------------------------------------------------------------------ static
    def static_mask(self, facts: PodFacts) -> BoolArray:
        snap = self.snap
        if facts.name_dependent:
            return self._per_node_static(facts)[0] & snap.active
        result: BoolArray = self._class_ok(facts)[snap.node_class_ids] & snap.active
        return result

    def static_ok(self, facts: PodFacts, i: int) -> bool:
        """:meth:`static_mask` of the one node at slot ``i``."""
        snap = self.snap
        if facts.name_dependent:
            return bool(self._per_node_static(facts)[0][i] and snap.active[i])
        return bool(self._class_ok(facts)[snap.node_class_ids[i]] and snap.active[i])

    def class_ok(self, facts: PodFacts) -> list[bool]:
        """The static filters' answer per node class as plain booleans, for walks over a few nodes
        (pods whose node selection names nodes have none: ask :meth:`static_ok`)."""
        ok = self._class_ok(facts)
        if len(facts.class_ok_list) != len(ok):
            facts.class_ok_list = ok.tolist()
        return facts.class_ok_list

    def _class_ok(self, facts: PodFacts) -> BoolArray:
        """The static filters' answer per node class (extended to classes added since)."""
        snap = self.snap
        classes = snap.classes
        if len(facts.class_ok) < len(classes):
            for cid in range(len(facts.class_ok), len(classes)):
                facts.class_failures.append(static_failure(facts.pod, "", classes[cid].label_map, snap, cid))
            facts.class_ok = np.array([f is None for f in facts.class_failures], np.bool_)
        return facts.class_ok

    def _per_node_static(self, facts: PodFacts) -> tuple[BoolArray, list[FilterFailure | None]]:
        snap = self.snap
        if facts.node_cache is None or facts.node_cache[0] != snap.node_epoch:
            failures = [
                static_failure(facts.pod, snap.name(i), snap.labels(i), snap, int(snap.node_class_ids[i]))
                for i in range(snap.num_slots)
            ]
            ok = np.array([f is None for f in failures], np.bool_)
            facts.node_cache = (snap.node_epoch, ok, failures)
        return facts.node_cache[1], facts.node_cache[2]

    def _static_failure_at(self, facts: PodFacts, i: int) -> FilterFailure | None:
        if facts.name_dependent:
            return self._per_node_static(facts)[1][i]
        self.static_mask(facts)
        return facts.class_failures[int(self.snap.node_class_ids[i])]

    # ------------------------------------------------------------------ full
    def feasible(self, facts: PodFacts, within: BoolArray | None = None) -> BoolArray:
        """Nodes passing every filter for one more pod like ``facts.pod``, optionally restricted."""
        ok = self.static_mask(facts)
        if within is not None:
            ok = ok & within
        return self._dynamic(facts, ok, 0)

    def feasible_from(self, facts: PodFacts, start: int) -> BoolArray:
        """:meth:`feasible` of the slots from ``start`` on (the estimator's new nodes), indexed from 0."""
        snap = self.snap
        if facts.name_dependent:
            ok = self._per_node_static(facts)[0][start:] & snap.active[start:]
        else:
            ok = self._class_ok(facts)[snap.node_class_ids[start:]] & snap.active[start:]
        return self._dynamic(facts, ok, start)

    def local_mask(self, facts: PodFacts) -> BoolArray:
        """The static filters and those that read only a node's own pods (ports, resources), for every
        slot: what a bind changes on its node alone (see :meth:`local_fits`)."""
        return self._local(facts, self.static_mask(facts), 0)

    def _local(self, facts: PodFacts, ok: BoolArray, start: int) -> BoolArray:
        snap = self.snap
        vec = facts.vector(snap)
        for f in LOCAL_FILTERS:
            if not ok.any():
                break
            if f.applies(facts.pod, snap):
                ok = ok & f.mask(facts.pod, snap, vec, start)
        return ok

    def _dynamic(self, facts: PodFacts, ok: BoolArray, start: int) -> BoolArray:
        ok = self._local(facts, ok, start)
        if ok.any():
            rules = self.rules(facts)
            if rules:
                ok = rules_mask(rules, self.snap.pod_index(), start, within=ok)
        return ok

    def rules(self, facts: PodFacts) -> Rules:
        """The inter-pod filters' rules for one more pod like ``facts.pod`` (empty: none applies, and
        then the snapshot's pod index is not even built)."""
        snap, pod = self.snap, facts.pod
        applying = facts.domain_filters
        if applying is None:  # those that could apply to this template, once
            applying = facts.domain_filters = [f for f in DOMAIN_FILTERS if f.may_apply(pod)]
            facts.filters_always_apply = all(f.always_applies(pod) for f in applying)
        if not facts.filters_always_apply:
            applying = [f for f in applying if f.pod_decides or f.applies(pod, snap)]
        if not applying:
            return ()
        index = snap.pod_index()
        kept = facts.domain_states
        if kept is None or kept[0] is not index or kept[1] != index.generation:
            kept = facts.domain_states = (index, index.generation, {})
        states = kept[2]
        parts = []
        for f in applying:
            state = states.get(f.name)
            if state is None:
                state = states[f.name] = f.state(pod, snap)
            parts.append(state.current())
        if len(parts) == 1:
            return parts[0]  # the state's own tuple: the same object while its rules hold
        joined = facts.joined_rules
        if joined is not None and len(joined[0]) == len(parts) and all(map(operator.is_, joined[0], parts)):
            return joined[1]
        rules = tuple(rule for part in parts for rule in part)
        facts.joined_rules = (parts, rules)
        return rules

    def fits(self, facts: PodFacts, slot: int) -> bool:
        """:meth:`feasible` of one slot, without a mask over every node."""
        if not self.local_fits(facts, slot):
            return False
        if not facts.inter_pod and not self.snap.constrained_pods:
            return True  # no inter-pod filter applies
        rules = self.rules(facts)
        return not rules or rules_fit(rules, self.snap.pod_index(), slot)

    def local_fits(self, facts: PodFacts, slot: int) -> bool:
        """The static filters and those that read only the node's own pods (ports, resources), for one
        slot: what a bind on that node alone can change."""
        snap = self.snap
        if not self.static_ok(facts, slot):
            return False
        needs = facts.needs(snap)
        if not facts.pod.host_ports:  # NodeResourcesFit alone, inline
            return room_for_one(snap.allocatable[slot].tolist(), snap.requested[slot].tolist(), needs)
        return all(f.fits(facts.pod, snap, slot, needs) for f in LOCAL_FILTERS if f.applies(facts.pod, snap))

    def capacity(self, facts: PodFacts, within: BoolArray | None = None, start: int = 0) -> NDArray[np.int64]:
        """How many more identical pods fit per node (slots ``start`` on: the estimator asks only about
        the nodes it added); only valid when :meth:`is_simple` holds."""
        ok = self.static_mask(facts)[start:]
        if within is not None:
            ok = ok & within[start:]
        counts = pods_that_fit(self.snap, facts.vector(self.snap), start)
        result: NDArray[np.int64] = np.where(ok, counts, 0)
        return result

    def diagnose(self, facts: PodFacts, nodes: NDArray[np.intp]) -> list[FilterFailure | None]:
        """The first failing filter per node, with its reasons (None where the pod fits)."""
        snap = self.snap
        out: list[FilterFailure | None] = [self._static_failure_at(facts, int(i)) for i in nodes]
        vec = facts.vector(snap)
        for f in DYNAMIC_FILTERS:
            pending = np.array([k for k, r in enumerate(out) if r is None], np.intp)
            if len(pending) == 0:
                break
            if not f.applies(facts.pod, snap):
                continue
            for k, failure in zip(pending, f.failures(facts.pod, snap, vec, nodes[pending]), strict=True):
                out[int(k)] = failure
        return out
