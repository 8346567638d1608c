"""The shape every scheduling filter shares, and the per-pod facts filters read.

Filters come in two kinds. *Static* filters (node unschedulable, taints, node affinity) read only the
node, never the pods bound to it, so their answer for a pod is cached per node class. *Dynamic* filters
(host ports, resources, topology spread, inter-pod affinity) read the pods bound to nodes and are
evaluated against the snapshot as it is, over all nodes at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from kubetide.model.node import HOSTNAME_LABEL
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.predicates.domains import RuleState
from kubetide.scheduling.reasons import FilterFailure
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["DomainFilter", "DynamicFilter", "StaticFilter", "name_dependent", "uses_inter_pod_constraints"]

BoolArray = NDArray[np.bool_]


class StaticFilter(Protocol):
    """A filter that reads only the node: name, labels, taints, ``spec.unschedulable``."""

    name: str

    def check(
        self,
        pod: Pod,
        node_name: str,
        labels: Mapping[str, str],
        taints: tuple[Taint, ...],
        unschedulable: bool,
    ) -> FilterFailure | None:
        """None when the node passes; otherwise the failure with kube-scheduler's reason text."""
        ...


class DynamicFilter(Protocol):
    """A filter whose answer depends on the pods already bound to nodes."""

    name: str

    def applies(self, pod: Pod, snap: ClusterSnapshot) -> bool:
        """False when the filter passes every node for this pod (so it can be skipped)."""
        ...

    def mask(self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], start: int = 0) -> BoolArray:
        """Pass/fail for every slot of the snapshot from ``start`` on (``vec``: the pod's request row)."""
        ...

    def fits(self, pod: Pod, snap: ClusterSnapshot, slot: int, needs: list[tuple[int, int]]) -> bool:
        """Pass/fail for one slot (``mask`` of that slot, without building a mask); ``needs``: the pod's
        request as (column, amount) pairs (``PodFacts.needs``)."""
        ...

    def failures(
        self, pod: Pod, snap: ClusterSnapshot, vec: NDArray[np.int64], nodes: NDArray[np.intp]
    ) -> list[FilterFailure | None]:
        """The failure (or None) for each of ``nodes``; used to explain, never on hot paths."""
        ...


class DomainFilter(DynamicFilter, Protocol):
    """A dynamic filter that decides a node by its topology domains: its state is per-domain rules."""

    # True when :meth:`applies` is :meth:`may_apply` whatever the snapshot (asked once per template).
    pod_decides: bool

    def may_apply(self, pod: Pod) -> bool:
        """False when :meth:`applies` is False for this pod whatever the snapshot."""
        ...

    def always_applies(self, pod: Pod) -> bool:
        """True when :meth:`applies` is True for this pod whatever the snapshot."""
        ...

    def state(self, pod: Pod, snap: ClusterSnapshot) -> RuleState:
        """The filter's kept state for ``pod``'s template: its rules, in the order it checks them."""
        ...


def name_dependent(pod: Pod) -> bool:
    """True when the pod's node selection reads the node's name or hostname label, so static filters
    must be evaluated per node rather than per node class."""
    if HOSTNAME_LABEL in pod.node_selector:
        return True
    for term in pod.required_node_affinity or ():
        if term.match_fields or any(r.key == HOSTNAME_LABEL for r in term.match_expressions):
            return True
    return False


def uses_inter_pod_constraints(pod: Pod) -> bool:
    """Pods whose fit depends on other pods' labels or ports (never batched per node)."""
    return bool(
        pod.pod_affinity
        or pod.pod_anti_affinity
        or pod.host_ports
        or any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.topology_spread)
    )
