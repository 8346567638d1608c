"""PodTopologySpread (``whenUnsatisfiable: DoNotSchedule`` constraints only; ``ScheduleAnyway`` only scores).

For each constraint, count the pods matching its selector (plus ``matchLabelKeys``) in the incoming
pod's namespace, per topology domain, over the *eligible* nodes: nodes carrying every constraint's
topology key that pass the inclusion policies (node affinity honoured by default, taints ignored by
default). A node is rejected when ``count(domain) + selfMatch - globalMin > maxSkew``; the global
minimum is taken as 0 while fewer than ``minDomains`` (default 1) domains exist. A node without the
topology key is rejected as unresolvable ("missing required label").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import TopologySpreadConstraint
from kubetide.model.selectors import LabelSelector, Requirement
from kubetide.scheduling.predicates.node_affinity import matches_node_selection
from kubetide.scheduling.predicates.taint_toleration import first_untolerated_taint
from kubetide.scheduling.reasons import FilterFailure, Reason
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["PodTopologySpread", "hard_constraints"]


def hard_constraints(pod: Pod) -> tuple[TopologySpreadConstraint, ...]:
    return tuple(c for c in pod.topology_spread if c.when_unsatisfiable == "DoNotSchedule")


def _selector(pod: Pod, c: TopologySpreadConstraint) -> LabelSelector:
    extra = tuple(Requirement(k, "In", (pod.labels[k],)) for k in c.match_label_keys if k in pod.labels)
    return LabelSelector(c.selector.requirements + extra) if extra else c.selector


@dataclass(frozen=True, slots=True)
class _ConstraintState:
    constraint: TopologySpreadConstraint
    values: list[str | None]  # domain per slot
    counts: dict[str, int]  # matching pods per eligible domain
    self_match: int
    global_min: int


def _states(pod: Pod, snap: ClusterSnapshot) -> list[_ConstraintState]:
    constraints = hard_constraints(pod)
    values = {c.topology_key: snap.topology_values(c.topology_key) for c in constraints}
    has_all = [all(values[c.topology_key][i] is not None for c in constraints) for i in range(snap.num_slots)]
    states = []
    for c in constraints:
        selector = _selector(pod, c)
        vals = values[c.topology_key]
        counts: dict[str, int] = {}
        for i in range(snap.num_slots):
            value = vals[i]
            if value is None or not has_all[i]:
                continue
            node = snap.node(i)
            if c.node_affinity_policy == "Honor" and not matches_node_selection(pod, node.name, node.labels):
                continue
            if c.node_taints_policy == "Honor" and first_untolerated_taint(pod, node.taints) is not None:
                continue
            n = sum(
                1
                for p in snap.pods_on(i)
                if p.namespace == pod.namespace and p.deletion_time is None and selector.matches(p.labels)
            )
            counts[value] = counts.get(value, 0) + n
        min_domains = c.min_domains or 1
        global_min = min(counts.values()) if len(counts) >= min_domains and counts else 0
        states.append(_ConstraintState(c, vals, counts, int(selector.matches(pod.labels)), global_min))
    return states


def _node_failure(states: list[_ConstraintState], i: int) -> FilterFailure | None:
    for s in states:
        value = s.values[i]
        if value is None:
            return FilterFailure(
                PodTopologySpread.name, (Reason.TOPOLOGY_SPREAD_LABEL.value,), unresolvable=True
            )
        if s.counts.get(value, 0) + s.self_match - s.global_min > s.constraint.max_skew:
            return FilterFailure(PodTopologySpread.name, (Reason.TOPOLOGY_SPREAD.value,))
    return None


class PodTopologySpread:
    name = "PodTopologySpread"

    def applies(self, pod: Pod, snap: ClusterSnapshot) -> bool:
        return bool(hard_constraints(pod))

    def mask(self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64]) -> NDArray[np.bool_]:
        states = _states(pod, snap)
        ok = np.ones(snap.num_slots, np.bool_)
        for s in states:
            limit = s.constraint.max_skew - s.self_match + s.global_min
            for i, value in enumerate(s.values):
                if value is None or s.counts.get(value, 0) > limit:
                    ok[i] = False
        return ok

    def failures(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], nodes: NDArray[np.intp]
    ) -> list[FilterFailure | None]:
        states = _states(pod, snap)
        return [_node_failure(states, int(i)) for i in nodes]
