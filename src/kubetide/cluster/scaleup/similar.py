"""Which node groups are "similar" enough to balance a scale-up across (``NodeInfoComparator``, §6.6).

Two templates are similar when their capacities match (memory within ``--memory-difference-ratio``,
everything else exactly), their allocatable and free resources are within their ratios, and their labels
match except for the ones that differ by nature between zones and groups (hostname, zone, region,
provider-specific group labels, ``--balancing-ignore-label``). ``--balancing-label`` replaces all of
this with an exact match on the given labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import MEMORY, Resources

__all__ = ["BASIC_IGNORED_LABELS", "PROVIDER_IGNORED_LABELS", "SimilarityRules", "similar_templates"]

BASIC_IGNORED_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/fluentd-ds-ready",
        "kops.k8s.io/instancegroup",
    }
)
# Each provider's own per-group labels, which differ between otherwise identical groups by design: CA
# adds its provider's (``eks.amazonaws.com/nodegroup`` and eksctl's on AWS, the pool labels on GCE and
# Azure); kubetide's simulated and kwok providers label their nodes with ``kubetide.io/node-group``.
PROVIDER_IGNORED_LABELS = frozenset(
    {
        "kubetide.io/node-group",
        "eks.amazonaws.com/nodegroup",
        "alpha.eksctl.io/nodegroup-name",
        "alpha.eksctl.io/instance-id",
        "k8s.amazonaws.com/eniConfig",
    }
)


@dataclass(frozen=True, slots=True)
class SimilarityRules:
    memory_difference_ratio: float = 0.015
    max_allocatable_difference_ratio: float = 0.05
    max_free_difference_ratio: float = 0.05
    ignored_labels: frozenset[str] = BASIC_IGNORED_LABELS
    balancing_labels: tuple[str, ...] = ()


def _close(a: int, b: int, ratio: float) -> bool:
    larger, smaller = max(a, b), min(a, b)
    return larger - smaller <= larger * ratio


def _resources_close(a: Mapping[str, int], b: Mapping[str, int], ratio: float) -> bool:
    # A name missing on one side is a zero there (Resources drops zeros), so it only matches a zero.
    return all(_close(a.get(r, 0), b.get(r, 0), ratio) for r in set(a) | set(b))


def _requested(pods: Iterable[Pod]) -> Resources:
    total = Resources()
    for p in pods:
        total = total + p.requests
    return total


def similar_templates(
    a: NodeView, a_pods: Iterable[Pod], b: NodeView, b_pods: Iterable[Pod], rules: SimilarityRules
) -> bool:
    if rules.balancing_labels:
        return all(a.labels.get(k) == b.labels.get(k) for k in rules.balancing_labels)
    if set(a.capacity) != set(b.capacity):
        return False
    for r in a.capacity:
        if r == MEMORY:
            if not _close(a.capacity[r], b.capacity[r], rules.memory_difference_ratio):
                return False
        elif a.capacity[r] != b.capacity[r]:
            return False
    if not _resources_close(a.allocatable, b.allocatable, rules.max_allocatable_difference_ratio):
        return False
    free_a = a.allocatable - _requested(a_pods)
    free_b = b.allocatable - _requested(b_pods)
    if not _resources_close(free_a, free_b, rules.max_free_difference_ratio):
        return False
    keys = (set(a.labels) | set(b.labels)) - rules.ignored_labels
    return all(a.labels.get(k) == b.labels.get(k) for k in keys)
