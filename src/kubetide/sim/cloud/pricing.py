"""The simulated cloud's ``PricingModel``, for Cluster Autoscaler's price expander.

Nodes cost their group's ``pricePerHour``. A node is matched to its group by providerID, else by the
``kubetide.io/node-group`` label (templates and CA's sanitized copies keep it), else by instance type.
Pods are priced like GCE's model prices requests: per vCPU-hour, per GiB-hour of memory and per
GPU-hour, with GCE's on-demand constants, so the expander's node/pod price ratio has its usual scale.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.cloud.instance import CloudProviderError
from kubetide.model.node import INSTANCE_TYPE_LABEL, NodeView
from kubetide.model.pod import Pod, pod_requests
from kubetide.model.resources import CPU, MEMORY
from kubetide.sim.cloud.group import SimGroup
from kubetide.sim.cloud.instances import parse_provider_id
from kubetide.sim.cloud.nodes import GROUP_LABEL
from kubetide.sim.scenario.catalog import GPU_RESOURCE

__all__ = ["CPU_PRICE_PER_HOUR", "GPU_PRICE_PER_HOUR", "MEMORY_PRICE_PER_GIB_HOUR", "SimPricing"]

# GCE pricing model constants in Cluster Autoscaler (cloudprovider/gce/gce_price_model.go).
CPU_PRICE_PER_HOUR = 0.033174
MEMORY_PRICE_PER_GIB_HOUR = 0.004446
GPU_PRICE_PER_HOUR = 0.95  # kubetide's choice: a mid-range data-centre GPU on demand
_GIB = 2**30


class SimPricing:
    def __init__(self, groups: Mapping[str, SimGroup]) -> None:
        self._groups = groups

    def node_price(self, node: NodeView, start: float, end: float) -> float:
        return self._group_of(node).spec.price_per_hour * (end - start) / 3600.0

    def pod_price(self, pod: Pod, start: float, end: float) -> float:
        requests = pod_requests(pod)
        per_hour = (
            requests[CPU] / 1000 * CPU_PRICE_PER_HOUR
            + requests[MEMORY] / _GIB * MEMORY_PRICE_PER_GIB_HOUR
            + requests[GPU_RESOURCE] * GPU_PRICE_PER_HOUR
        )
        return per_hour * (end - start) / 3600.0

    def _group_of(self, node: NodeView) -> SimGroup:
        short_id = parse_provider_id(node.provider_id)
        for group in self._groups.values():
            if short_id is not None and short_id in group.live:
                return group
        by_label = self._groups.get(node.labels.get(GROUP_LABEL, ""))
        if by_label is not None:
            return by_label
        instance_type = node.labels.get(INSTANCE_TYPE_LABEL)
        for group in self._groups.values():
            if group.spec.instance_type == instance_type:
                return group
        raise CloudProviderError(f"no price for node {node.name}: not a machine of the simulated cloud")
