"""kube-scheduler's filters, one module each, in the order the default profile runs them.

The order matters: upstream stops at the first filter that rejects a node and reports only that
filter's reasons, so "0/3 nodes are available" messages depend on it. Static filters (node-only) all
come before the dynamic ones in the default profile, which lets us cache them per node class:
NodeUnschedulable, (NodeName), TaintToleration, NodeAffinity, then NodePorts, NodeResourcesFit,
PodTopologySpread, InterPodAffinity. Volume filters are out of scope.
"""

from __future__ import annotations

from kubetide.scheduling.predicates.base import DomainFilter, DynamicFilter, StaticFilter
from kubetide.scheduling.predicates.inter_pod_affinity import InterPodAffinity
from kubetide.scheduling.predicates.node_affinity import NodeAffinity
from kubetide.scheduling.predicates.node_ports import NodePorts
from kubetide.scheduling.predicates.node_resources import NodeResourcesFit
from kubetide.scheduling.predicates.node_unschedulable import NodeUnschedulable
from kubetide.scheduling.predicates.taint_toleration import TaintToleration
from kubetide.scheduling.predicates.topology_spread import PodTopologySpread

__all__ = [
    "DOMAIN_FILTERS",
    "DYNAMIC_FILTERS",
    "LOCAL_FILTERS",
    "STATIC_FILTERS",
    "DomainFilter",
    "DynamicFilter",
    "StaticFilter",
]

STATIC_FILTERS: tuple[StaticFilter, ...] = (NodeUnschedulable(), TaintToleration(), NodeAffinity())
# Dynamic filters that read only the node's own pods (a bind changes their answer on that node only)...
LOCAL_FILTERS: tuple[DynamicFilter, ...] = (NodePorts(), NodeResourcesFit())
# ... and those that read pods per topology domain, as per-domain rules (predicates.domains).
DOMAIN_FILTERS: tuple[DomainFilter, ...] = (PodTopologySpread(), InterPodAffinity())
DYNAMIC_FILTERS: tuple[DynamicFilter, ...] = (*LOCAL_FILTERS, *DOMAIN_FILTERS)
