"""The order the binpacking estimator tries equivalence groups in: Cluster Autoscaler's
``DecreasingPodOrderer``, largest first by ``cpu/allocatable cpu + memory/allocatable memory`` of the
group's first pod on the template node (a term is left out when that allocatable is missing or 0).

Upstream's sort is not stable; ours is, so groups with equal scores keep their input order.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, MEMORY
from kubetide.scheduling.equivalence import PodGroup

__all__ = ["order_groups", "pod_score"]


def pod_score(pod: Pod, template: NodeView) -> float:
    score = 0.0
    req, alloc = pod.requests, template.allocatable
    for name in (CPU, MEMORY):
        if alloc[name] > 0:
            score += req[name] / alloc[name]
    return score


def order_groups(groups: Sequence[PodGroup], template: NodeView) -> list[PodGroup]:
    return sorted(groups, key=lambda g: -pod_score(g.representative, template))
