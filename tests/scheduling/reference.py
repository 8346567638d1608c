"""A deliberately plain reference for the scheduling core: one pod, one node, one check at a time.

Property tests compare the vectorized code against it. It shares only the snapshot as a container of
nodes and bound pods (never its requested-resource arrays: free resources are summed from the bound
pods here) and the inter-pod filters' per-node explanation path. Static filters, resources, host
ports, the estimator's pod-by-pod loop and the removal simulation's round robin are written out again,
the slow and obvious way. It is quadratic, and a test oracle only: it lives with the tests, outside the
installed package.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kubetide.model.node import HOSTNAME_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.equivalence import group_pods
from kubetide.scheduling.limiter import ThresholdLimiter
from kubetide.scheduling.pod_order import order_groups
from kubetide.scheduling.predicates.inter_pod_affinity import InterPodAffinity
from kubetide.scheduling.predicates.topology_spread import PodTopologySpread, hard_constraints
from kubetide.scheduling.reasons import FilterFailure, Reason, insufficient, untolerated_taint
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["ref_estimate", "ref_failure", "ref_fits", "ref_remove"]

_UNSCHEDULABLE = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def ref_failure(snap: ClusterSnapshot, pod: Pod, i: int) -> FilterFailure | None:
    """The first failing filter for ``pod`` on slot ``i``, computed from scratch."""
    node = snap.node(i)
    if node.unschedulable and not any(t.tolerates(_UNSCHEDULABLE) for t in pod.tolerations):
        return FilterFailure("NodeUnschedulable", (Reason.NODE_UNSCHEDULABLE.value,), True)
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(
            t.tolerates(taint) for t in pod.tolerations
        ):
            return FilterFailure("TaintToleration", (untolerated_taint(taint.key, taint.value),), True)
    selected = all(node.labels.get(k) == v for k, v in pod.node_selector.items())
    if selected and pod.required_node_affinity is not None:
        selected = any(t.matches(node.name, node.labels) for t in pod.required_node_affinity)
    if not selected:
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
    one = np.array([i], np.intp)
    vec = snap.vector(pod.requests)
    if hard_constraints(pod):
        failure = PodTopologySpread().failures(pod, snap, vec, one)[0]
        if failure is not None:
            return failure
    if InterPodAffinity().applies(pod, snap):
        return InterPodAffinity().failures(pod, snap, vec, one)[0]
    return None


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
