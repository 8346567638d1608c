"""How many nodes of one node group's template would the pending pods need: Cluster Autoscaler's
``BinpackingEstimator``.

Groups are tried largest first (:mod:`pod_order`). For each group: first fit over the nodes added so
far, stopping at the first pod that fits none of them (the rest of the group is identical); then, for
each remaining pod, the last added node, else a new template node if the limiter allows, except that a
pod that did not fit the last node while that node is still *empty* would not fit a fresh node either,
so the group stops there. A pod that fails the last node only because of a hostname topology-spread
constraint may go to any other node, existing ones included (upstream counts such a node as one that
received a pod). Otherwise only new nodes that received a pod are counted.

Groups whose pods depend only on resources and static filters are placed in bulk: per-node capacity by
one vectorized division, the first-fit fill by a cumulative sum, and the new nodes by a ceiling
division, which gives the same answer as placing pod by pod. The others are placed pod by pod, asking
only about the new nodes (and, where no new node took the pod and nothing changed since, not asking
again). The snapshot is forked and reverted, so the estimate leaves it unchanged; the snapshot is the
cluster's (CA estimates on its cluster snapshot), so running pods count for the inter-pod filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from kubetide.model.node import HOSTNAME_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.equivalence import PodGroup, group_pods
from kubetide.scheduling.fit import FitChecker, PodFacts, static_failure
from kubetide.scheduling.limiter import ThresholdLimiter
from kubetide.scheduling.pod_order import order_groups
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["Estimate", "estimate", "schedulable_groups"]


@dataclass(frozen=True, slots=True)
class Estimate:
    """The estimator's decision: ``node_count`` new nodes would host ``scheduled``."""

    node_count: int
    scheduled: tuple[Pod, ...]
    unscheduled: tuple[Pod, ...]
    limited: bool  # the limiter refused a node (node count or time budget)

    @property
    def reason(self) -> str:
        if not self.unscheduled:
            return f"all {len(self.scheduled)} pods fit on {self.node_count} new node(s)"
        why = "the estimation limit was reached" if self.limited else "they fit no new node"
        return f"{len(self.scheduled)} pods fit on {self.node_count} new node(s); {len(self.unscheduled)} do not: {why}"


class _Run:
    def __init__(self, snap: ClusterSnapshot, template: NodeView, limiter: ThresholdLimiter) -> None:
        self.snap = snap
        self.template = template
        self.limiter = limiter
        self.checker = FitChecker.of(snap)
        for name in template.allocatable:  # columns first, so request rows computed later stay valid
            snap.column(name)
        self.base = snap.num_slots  # new nodes occupy slots [base, num_slots)
        self.received = np.zeros(0, np.int64)  # pods placed per new node
        self.existing_with_pods: set[int] = set()  # cluster nodes the hostname-spread retry used
        self.last: int | None = None
        self._none_fit: tuple[PodFacts, int, int] | None = None
        self.limited = False
        self.scheduled: list[Pod] = []
        self.unscheduled: list[Pod] = []

    # -- node bookkeeping
    def _add_nodes(self, count: int) -> int:
        first_index = self.snap.num_slots - self.base
        names = [f"{self.template.name}-e-{first_index + k}" for k in range(count)]
        first = self.snap.add_template_nodes(self.template, names)
        self.received = np.concatenate([self.received, np.zeros(count, np.int64)])
        self.last = first + count - 1
        return first

    def _last_is_empty(self) -> bool:
        return self.last is not None and self.received[self.last - self.base] == 0

    def _place(self, pod: Pod, slot: int, facts: PodFacts) -> None:
        self.snap.add_pod(pod, slot, facts.vector(self.snap))
        if slot >= self.base:
            self.received[slot - self.base] += 1
        else:
            self.existing_with_pods.add(slot)
        self.scheduled.append(pod)

    # -- bulk path
    def bulk(self, group: PodGroup, facts: PodFacts) -> None:
        pods = group.pods
        vec = facts.vector(self.snap)
        done = 0
        if self.snap.num_slots > self.base:
            cap = self.checker.capacity(facts, start=self.base)
            before = np.cumsum(cap) - cap
            take = np.clip(len(pods) - before, 0, cap)
            slots = np.flatnonzero(take)
            if len(slots):
                counts = take[slots]
                self.snap.add_pods_bulk(slots + self.base, counts, pods, vec)
                self.received[slots] += counts
                done = int(counts.sum())
        rest = len(pods) - done
        if rest:
            # Every new node, the last one included, is full for this group now.
            per_node = self._template_capacity(facts, vec)
            granted = 0
            while granted * max(per_node, 1) < rest:
                if (self.last is not None and self._last_is_empty()) or (granted and per_node == 0):
                    break
                if not self.limiter.permission_to_add_node():
                    self.limited = True
                    break
                granted += 1
            if granted:
                first = self._add_nodes(granted)
                counts = np.full(granted, per_node, np.int64)
                if per_node:
                    counts[-1] = min(per_node, rest - per_node * (granted - 1))
                    slots = np.arange(first, first + granted, dtype=np.intp)
                    self.snap.add_pods_bulk(slots, counts, pods[done:], vec)
                    self.received[first - self.base :] += counts
                    done += int(counts.sum())
        self.scheduled.extend(pods[:done])
        self.unscheduled.extend(pods[done:])

    def _template_capacity(self, facts: PodFacts, vec: NDArray[np.int64]) -> int:
        snap = self.snap
        cid = snap.class_id(self.template)
        if static_failure(facts.pod, "", snap.classes[cid].label_map, snap, cid) is not None:
            return 0
        alloc = snap.vector(self.template.allocatable, pods=0)
        alloc[snap.column("pods")] = self.template.allocatable["pods"]
        cols = np.flatnonzero(vec)
        return max(int((alloc[cols] // vec[cols]).min()), 0)

    # -- pod-by-pod path
    def one_by_one(self, group: PodGroup, facts: PodFacts) -> None:
        pods = group.pods
        k = 0
        while k < len(pods) and self.snap.num_slots > self.base:
            ok = self.checker.feasible_from(facts, self.base)
            if not ok.any():
                self._fits_none(facts)
                break
            self._place(pods[k], self.base + int(np.argmax(ok)), facts)
            k += 1
        hostname_spread = any(c.topology_key == HOSTNAME_LABEL for c in facts.pod.topology_spread)
        for index in range(k, len(pods)):
            placed = self._new_node_step(pods[index], facts, hostname_spread)
            if placed is None:  # the rest of the group is identical: it would stop here too
                self.unscheduled.extend(pods[index:])
                return
            if not placed:
                self.unscheduled.append(pods[index])

    def _new_node_step(self, pod: Pod, facts: PodFacts, hostname_spread: bool) -> bool | None:
        """True: placed; False: left out (a fresh node was added but took no pod); None: stop the group."""
        last = self.last
        if last is not None:
            if not self._known_to_fit_none(facts) and self.checker.fits(facts, last):
                self._place(pod, last, facts)
                return True
            if hostname_spread:
                failure = self.checker.diagnose(facts, np.array([last], np.intp))[0]
                if failure is not None and failure.filter_name == "PodTopologySpread":
                    # Upstream retries on *any* node but the last one, existing nodes included, and
                    # counts whichever node takes the pod among the "new nodes with pods".
                    others = self.snap.active.copy()
                    others[last] = False
                    ok = self.checker.feasible(facts, others)
                    if ok.any():
                        self._place(pod, int(np.argmax(ok)), facts)
                        return True
            if self._last_is_empty():
                return None
        if not self.limiter.permission_to_add_node():
            self.limited = True
            return None
        known = self._known_to_fit_none(facts)
        slot = self._add_nodes(1)
        if self.checker.fits(facts, slot):
            self._place(pod, slot, facts)
            return True
        if known:  # the other new nodes took none, and nothing was bound since
            self._fits_none(facts)
        return False

    def _fits_none(self, facts: PodFacts) -> None:
        """Note that no new node takes a pod like ``facts.pod`` as the snapshot is now."""
        self._none_fit = (facts, self.snap.node_epoch, self.snap.pods_epoch)

    def _known_to_fit_none(self, facts: PodFacts) -> bool:
        """True when, as noted and nothing changed since, no new node takes a pod like ``facts.pod``:
        the last node need not be asked again (upstream asks, and gets the same no)."""
        snap = self.snap
        return self._none_fit == (facts, snap.node_epoch, snap.pods_epoch)


def estimate(
    snap: ClusterSnapshot,
    template: NodeView,
    pods: Sequence[Pod] | Sequence[PodGroup],
    limiter: ThresholdLimiter | None = None,
) -> Estimate:
    """Estimate new nodes of ``template`` for ``pods`` (or ready-made groups); ``snap`` is unchanged."""
    groups = group_pods(pods) if pods and isinstance(pods[0], Pod) else list(pods)  # type: ignore[arg-type]
    limiter = limiter if limiter is not None else ThresholdLimiter()
    limiter.start()
    snap.fork()
    try:
        run = _Run(snap, template, limiter)
        for group in order_groups(groups, template):  # type: ignore[arg-type]
            facts = run.checker.facts(group.representative)
            if run.checker.is_simple(facts) and not facts.name_dependent:
                run.bulk(group, facts)
            else:
                run.one_by_one(group, facts)
        # Upstream counts every node that received a pod, so cluster nodes used by the hostname-spread
        # retry count too (estimationState.newNodesWithPods is keyed by any node name).
        node_count = int((run.received > 0).sum()) + len(run.existing_with_pods)
        return Estimate(node_count, tuple(run.scheduled), tuple(run.unscheduled), run.limited)
    finally:
        snap.revert()


def schedulable_groups(
    snap: ClusterSnapshot, template: NodeView, groups: Sequence[PodGroup]
) -> list[PodGroup]:
    """The groups whose first pod fits an empty node of ``template`` added to ``snap``: the groups a
    node group of that template could help (CA's ``ScaleUpOrchestrator.SchedulablePodGroups``, which
    checks each group's sample pod on the template node added to the cluster snapshot). ``snap`` is
    unchanged."""
    if not groups:
        return []
    name = template.name
    while snap.has_node(name) or name in snap.slot_index:
        name += "-check"
    snap.fork()
    try:
        slot = snap.add_template_nodes(template, [name])
        checker = FitChecker.of(snap)
        return [g for g in groups if checker.fits(checker.facts(g.representative), slot)]
    finally:
        snap.revert()
