"""The order the binpacking estimator tries equivalence groups in: Cluster Autoscaler's
``DecreasingPodOrderer``, largest first by ``cpu/allocatable cpu + memory/allocatable memory`` of the
group's first pod on the template node (a term is left out when that allocatable is missing or 0).

Upstream's sort is not stable; ours is, so groups with equal scores keep their input order.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.model.node import HOSTNAME_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, MEMORY
from kubetide.scheduling.equivalence import PodGroup

__all__ = ["fastpath_group", "order_groups", "pod_score"]


def pod_score(pod: Pod, template: NodeView) -> float:
    score = 0.0
    req, alloc = pod.requests, template.allocatable
    for name in (CPU, MEMORY):
        if alloc[name] > 0:
            score += req[name] / alloc[name]
    return score


def order_groups(groups: Sequence[PodGroup], template: NodeView) -> list[PodGroup]:
    return sorted(groups, key=lambda g: -pod_score(g.representative, template))


def fastpath_group(groups: Sequence[PodGroup], template: NodeView) -> int:
    """Upstream's ``determineBestPEGToFastpath`` (used when ``--fastpath-binpacking-enabled``): the group
    whose simulation on a single node saves the most, ``pods - pods // nodes`` where ``nodes`` is the
    resource lower bound (or the pod count for hostname anti-affinity); ties go to the later group.
    Groups with topology spread or non-hostname anti-affinity are not eligible; -1 if none is."""
    best, best_saved = -1, -1
    alloc = template.allocatable
    for index, group in enumerate(groups):
        pod = group.representative
        if pod.topology_spread or any(t.topology_key != HOSTNAME_LABEL for t in pod.pod_anti_affinity):
            continue
        count = len(group.pods)
        nodes = count if pod.pod_anti_affinity else 0
        for name in (CPU, MEMORY):
            if alloc[name] > 0:
                nodes = max(nodes, -(-count * pod.requests[name] // alloc[name]))
        nodes = max(nodes, 1)
        saved = count - count // nodes
        if saved >= best_saved:
            best, best_saved = index, saved
    return best
