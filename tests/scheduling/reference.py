"""A deliberately plain reference for the scheduling core: one pod, one node, one check at a time.

Property tests compare the vectorized code against it. It shares only the snapshot as a container of
nodes and bound pods (never its requested-resource arrays, pod index or domain counts: free resources
are summed from the bound pods here, and the inter-pod filters walk every bound pod for every check, as
kube-scheduler's PreFilter does). Static filters, resources, host ports, topology spread
(``podtopologyspread/filtering.go``: ``calPreFilterState``, ``Filter``), inter-pod affinity
(``interpodaffinity/filtering.go``: ``getExistingAntiAffinityCounts``,
``getIncomingAffinityAntiAffinityCounts``, ``satisfyPodAffinity``, ``satisfyPodAntiAffinity``,
``satisfyExistingPodsAntiAffinity``), the estimator's pod-by-pod loop and the removal simulation's
round robin are written out again, the slow and obvious way. It is quadratic, and a test oracle only:
it lives with the tests, outside the installed package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kubetide.model.node import HOSTNAME_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubetide.model.scheduling_terms import PodAffinityTerm, Taint, TopologySpreadConstraint
from kubetide.model.selectors import LabelSelector, Requirement
from kubetide.scheduling.equivalence import equivalence_key, group_pods
from kubetide.scheduling.limiter import ThresholdLimiter
from kubetide.scheduling.pod_order import order_groups
from kubetide.scheduling.reasons import FilterFailure, Reason, insufficient, untolerated_taint
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = [
    "ref_estimate",
    "ref_failure",
    "ref_fits",
    "ref_hinting",
    "ref_inter_pod_failure",
    "ref_remove",
    "ref_spread_failure",
]

_UNSCHEDULABLE = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
Pair = tuple[str, str]


def _node_selected(pod: Pod, node: NodeView) -> bool:
    """NodeAffinity's answer: the node selector, then any required node affinity term."""
    selected = all(node.labels.get(k) == v for k, v in pod.node_selector.items())
    if selected and pod.required_node_affinity is not None:
        selected = any(t.matches(node.name, node.labels) for t in pod.required_node_affinity)
    return selected


def _untolerated(pod: Pod, node: NodeView) -> Taint | None:
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(
            t.tolerates(taint) for t in pod.tolerations
        ):
            return taint
    return None


def _spread_selector(pod: Pod, c: TopologySpreadConstraint) -> LabelSelector:
    """The constraint's selector with ``matchLabelKeys`` merged in (the incoming pod's values)."""
    extra = tuple(Requirement(k, "In", (pod.labels[k],)) for k in c.match_label_keys if k in pod.labels)
    return LabelSelector(c.selector.requirements + extra)


def ref_spread_failure(snap: ClusterSnapshot, pod: Pod, i: int) -> FilterFailure | None:
    """PodTopologySpread for ``pod`` on slot ``i``: PreFilter's counts over every node, then Filter."""
    constraints = [c for c in pod.topology_spread if c.when_unsatisfiable == "DoNotSchedule"]
    if not constraints:
        return None
    match_num: dict[Pair, int] = {}
    for j in range(snap.num_slots):
        if not snap.active[j]:
            continue
        node = snap.node(j)
        if not all(c.topology_key in node.labels for c in constraints):
            continue
        per_node: dict[Pair, int] = {}
        for c in constraints:
            if c.node_affinity_policy == "Honor" and not _node_selected(pod, node):
                continue
            if c.node_taints_policy == "Honor" and _untolerated(pod, node) is not None:
                continue
            selector = _spread_selector(pod, c)
            per_node[(c.topology_key, node.labels[c.topology_key])] = sum(
                1
                for other in snap.pods_on(j)
                if other.deletion_time is None
                and other.namespace == pod.namespace
                and selector.matches(other.labels)
            )
        for pair, count in per_node.items():
            match_num[pair] = match_num.get(pair, 0) + count
    labels = snap.node(i).labels
    for c in constraints:
        if c.topology_key not in labels:
            return FilterFailure("PodTopologySpread", (Reason.TOPOLOGY_SPREAD_LABEL.value,), True)
        domains = [n for (key, _), n in match_num.items() if key == c.topology_key]
        min_match = min(domains) if domains and len(domains) >= (c.min_domains or 1) else 0
        self_match = 1 if _spread_selector(pod, c).matches(pod.labels) else 0
        count = match_num.get((c.topology_key, labels[c.topology_key]), 0)
        if count + self_match - min_match > c.max_skew:
            return FilterFailure("PodTopologySpread", (Reason.TOPOLOGY_SPREAD.value,))
    return None


def _term_matches(term: PodAffinityTerm, owner_namespace: str, target: Pod) -> bool:
    return term.namespace_matches(owner_namespace, target.namespace) and term.selector.matches(target.labels)


def ref_inter_pod_failure(snap: ClusterSnapshot, pod: Pod, i: int) -> FilterFailure | None:
    """InterPodAffinity for ``pod`` on slot ``i``: PreFilter's three counts over every bound pod, then
    Filter's checks in upstream's order (affinity, anti-affinity, existing pods' anti-affinity)."""
    affinity: dict[Pair, int] = {}
    anti: dict[Pair, int] = {}
    existing: dict[Pair, int] = {}
    for j in range(snap.num_slots):
        if not snap.active[j]:
            continue
        labels = snap.node(j).labels
        for other in snap.pods_on(j):
            for t in other.pod_anti_affinity:
                if _term_matches(t, other.namespace, pod) and t.topology_key in labels:
                    pair = (t.topology_key, labels[t.topology_key])
                    existing[pair] = existing.get(pair, 0) + 1
            if pod.pod_affinity and all(_term_matches(t, pod.namespace, other) for t in pod.pod_affinity):
                for t in pod.pod_affinity:
                    if t.topology_key in labels:
                        pair = (t.topology_key, labels[t.topology_key])
                        affinity[pair] = affinity.get(pair, 0) + 1
            for t in pod.pod_anti_affinity:
                if _term_matches(t, pod.namespace, other) and t.topology_key in labels:
                    pair = (t.topology_key, labels[t.topology_key])
                    anti[pair] = anti.get(pair, 0) + 1
    labels = snap.node(i).labels
    affinity_failure = FilterFailure("InterPodAffinity", (Reason.POD_AFFINITY.value,), True)
    pods_exist = True
    for t in pod.pod_affinity:
        if t.topology_key not in labels:
            return affinity_failure
        if affinity.get((t.topology_key, labels[t.topology_key]), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        first_of_a_set = not affinity and all(_term_matches(t, pod.namespace, pod) for t in pod.pod_affinity)
        if not first_of_a_set:
            return affinity_failure
    for t in pod.pod_anti_affinity:
        if t.topology_key in labels and anti.get((t.topology_key, labels[t.topology_key]), 0) > 0:
            return FilterFailure("InterPodAffinity", (Reason.POD_ANTI_AFFINITY.value,))
    if any(existing.get(pair, 0) > 0 for pair in labels.items()):
        return FilterFailure("InterPodAffinity", (Reason.EXISTING_ANTI_AFFINITY.value,))
    return None


def ref_failure(snap: ClusterSnapshot, pod: Pod, i: int) -> FilterFailure | None:
    """The first failing filter for ``pod`` on slot ``i``, computed from scratch."""
    node = snap.node(i)
    if node.unschedulable and not any(t.tolerates(_UNSCHEDULABLE) for t in pod.tolerations):
        return FilterFailure("NodeUnschedulable", (Reason.NODE_UNSCHEDULABLE.value,), True)
    taint = _untolerated(pod, node)
    if taint is not None:
        return FilterFailure("TaintToleration", (untolerated_taint(taint.key, taint.value),), True)
    if not _node_selected(pod, node):
        return FilterFailure("NodeAffinity", (Reason.NODE_AFFINITY.value,), True)
    bound = snap.pods_on(i)
    for port in pod.host_ports:
        if any(port.conflicts(have) for other in bound for have in other.host_ports):
            return FilterFailure("NodePorts", (Reason.HOST_PORTS.value,))
    reasons = []
    if len(bound) + 1 > node.allocatable[PODS]:
        reasons.append(Reason.TOO_MANY_PODS.value)
    names = [
        CPU,
        MEMORY,
        EPHEMERAL_STORAGE,
        *sorted(r for r in pod.requests if r not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)),
    ]
    for name in names:
        want = pod.requests[name]
        used = sum(p.requests[name] for p in bound)
        if want > 0 and want > node.allocatable[name] - used:
            reasons.append(insufficient(name))
    if reasons:
        return FilterFailure("NodeResourcesFit", tuple(reasons))
    return ref_spread_failure(snap, pod, i) or ref_inter_pod_failure(snap, pod, i)


def ref_fits(snap: ClusterSnapshot, pod: Pod, i: int) -> bool:
    return bool(snap.active[i]) and ref_failure(snap, pod, i) is None


def ref_estimate(
    snap: ClusterSnapshot, template: NodeView, pods: Sequence[Pod], limiter: ThresholdLimiter | None = None
) -> tuple[int, list[Pod]]:
    """Cluster Autoscaler's binpacking loop, pod by pod. Returns (node count, scheduled pods)."""
    limiter = limiter if limiter is not None else ThresholdLimiter()
    limiter.start()
    snap.fork()
    base = snap.num_slots
    received: dict[int, int] = {}
    scheduled: list[Pod] = []
    last: int | None = None

    def place(pod: Pod, slot: int) -> None:
        snap.add_pod(pod, slot)
        received[slot] = received.get(slot, 0) + 1
        scheduled.append(pod)

    try:
        for group in order_groups(group_pods(pods), template):
            k = 0
            while k < len(group.pods):
                slot = next(
                    (s for s in range(base, snap.num_slots) if ref_fits(snap, group.pods[k], s)), None
                )
                if slot is None:
                    break
                place(group.pods[k], slot)
                k += 1
            for pod in group.pods[k:]:
                if last is not None:
                    if ref_fits(snap, pod, last):
                        place(pod, last)
                        continue
                    failure = ref_failure(snap, pod, last)
                    hostname = any(c.topology_key == HOSTNAME_LABEL for c in pod.topology_spread)
                    if hostname and failure is not None and failure.filter_name == "PodTopologySpread":
                        # Any node but the last, cluster nodes included; the one taking it counts.
                        slot = next(
                            (
                                s
                                for s in range(snap.num_slots)
                                if s != last and snap.active[s] and ref_fits(snap, pod, s)
                            ),
                            None,
                        )
                        if slot is not None:
                            place(pod, slot)
                            continue
                    if received.get(last, 0) == 0:
                        break
                if not limiter.permission_to_add_node():
                    break
                last = snap.add_template_nodes(template, [f"{template.name}-e-{snap.num_slots - base}"])
                if ref_fits(snap, pod, last):
                    place(pod, last)
        return sum(1 for n in received.values() if n > 0), scheduled
    finally:
        snap.revert()


def ref_hinting(
    snap: ClusterSnapshot, pods: Sequence[Pod], hints: Mapping[str, str]
) -> tuple[list[Pod], dict[str, str]]:
    """Cluster Autoscaler's ``HintingSimulator.TrySchedulePods``, pod by pod: priority order (stable),
    each pod on its hinted node if it fits there, else the first node that fits; once a controller's pod
    fits nowhere, its pods of the same spec are not tried again (ten specs per controller, DaemonSets
    excepted). Binds into ``snap``; returns the pods bound and where (the new hints)."""
    placed: list[Pod] = []
    where: dict[str, str] = {}
    failed: dict[str, set[object]] = {}
    for pod in sorted(pods, key=lambda p: -p.priority):
        key = pod.uid or f"{pod.namespace}/{pod.name}"
        slot = None
        hinted = hints.get(key)
        if hinted is not None and snap.has_node(hinted) and ref_fits(snap, pod, snap.index_of(hinted)):
            slot = snap.index_of(hinted)
        controller = pod.controller
        owner = None if controller is None else controller.uid or f"{controller.kind}/{controller.name}"
        if slot is None:
            spec = equivalence_key(pod)
            if owner is not None and spec in failed.get(owner, ()):
                continue
            slot = next((i for i in range(snap.num_slots) if ref_fits(snap, pod, i)), None)
            if slot is None:
                if owner is not None and controller is not None and controller.kind != "DaemonSet":
                    specs = failed.setdefault(owner, set())
                    if len(specs) < 10:
                        specs.add(spec)
                continue
        snap.add_pod(pod, slot)
        where[key] = snap.name(slot)
        placed.append(pod)
    return placed, where


def ref_remove(snap: ClusterSnapshot, candidates: Sequence[str], move: Callable[[Pod], bool]) -> list[str]:
    """The removal simulation pod by pod with a round-robin cursor. Returns the removable nodes."""
    snap.fork()
    removed: list[str] = []
    cursor = 0
    dest = {i for i in range(snap.num_slots) if snap.active[i] and not snap.node(i).unschedulable}
    try:
        for name in candidates:
            if not snap.has_node(name):
                continue
            i = snap.index_of(name)
            snap.fork()
            pods = [p for p in snap.take_pods(i) if move(p)]
            local = cursor
            ok = True
            for group in group_pods(pods):
                for pod in group.pods:
                    n = snap.num_slots
                    order = [(local + k) % n for k in range(n)]
                    slot = next((s for s in order if s in dest and s != i and ref_fits(snap, pod, s)), None)
                    if slot is None:
                        ok = False
                        break
                    snap.add_pod(pod, slot)
                    local = (slot + 1) % n
                if not ok:
                    break
            if ok:
                snap.remove_node(i)
                snap.commit()
                dest.discard(i)
                cursor = local
                removed.append(name)
            else:
                snap.revert()
        return removed
    finally:
        snap.revert()
