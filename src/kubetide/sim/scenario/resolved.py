"""A node group with every default applied: what the simulated cloud builds machines and Nodes from.

Resource maps merge per resource, most specific last: the catalog entry, then ``capacity``; real
Nodes' ``allocatable`` is that capacity with ``allocatable`` on top; the provider's scale-from-zero
``template`` is the catalog entry (or ``capacity`` without one) with ``template`` on top, so it can
differ from reality exactly where the scenario says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubetide.model.quantity import Quantity
from kubetide.model.resources import CPU, MEMORY, PODS, Resources, resource_units
from kubetide.sim.scenario.catalog import GPU_RESOURCE, InstanceType
from kubetide.sim.scenario.nodegroups import NodeGroupSpec, Provisioning, TaintSpec

__all__ = ["ResolvedNodeGroup", "resolve_node_group"]

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"


@dataclass(frozen=True)
class ResolvedNodeGroup:
    name: str
    instance_type: str  # the catalog name, or "custom"
    capacity: Resources
    allocatable: Resources
    template_allocatable: Resources
    template_capacity: Resources
    zone: str
    price_per_hour: float
    labels: dict[str, str] = field(hash=False, compare=False)  # the group's, plus instance type and zone
    taints: tuple[TaintSpec, ...]
    template_labels: dict[str, str] = field(hash=False, compare=False)
    template_taints: tuple[TaintSpec, ...]
    min_size: int
    max_size: int
    initial_size: int
    provisioning: Provisioning


def _catalog_resources(entry: InstanceType) -> Resources:
    return Resources(
        {
            CPU: resource_units(CPU, entry.cpu),
            MEMORY: resource_units(MEMORY, entry.memory),
            PODS: entry.pods,
            GPU_RESOURCE: entry.gpu,
        }
    )


def _overlay(base: Resources, extra: Mapping[str, Quantity] | None) -> Resources:
    merged = dict(base)
    for name, quantity in (extra or {}).items():
        merged[name] = quantity.milli if name == CPU else quantity.value
    return Resources(merged)


def resolve_node_group(group: NodeGroupSpec, catalog: Mapping[str, InstanceType]) -> ResolvedNodeGroup:
    """Defaults applied; ``group.instanceType`` must be in ``catalog`` (the checks ensure it)."""
    entry = catalog[group.instanceType] if group.instanceType is not None else None
    listed = _catalog_resources(entry) if entry is not None else Resources()
    capacity = _overlay(listed, group.capacity)
    template = group.template
    claimed = listed if entry is not None else capacity
    zone = group.zone or (entry.zone if entry is not None else "zone-a")
    instance_type = group.instanceType or "custom"
    labels = {INSTANCE_TYPE_LABEL: instance_type, ZONE_LABEL: zone, **group.labels}
    return ResolvedNodeGroup(
        name=group.name,
        instance_type=instance_type,
        capacity=capacity,
        allocatable=_overlay(capacity, group.allocatable),
        template_capacity=_overlay(claimed, template.capacity if template else None),
        template_allocatable=_overlay(
            _overlay(claimed, template.capacity if template else None),
            template.allocatable if template else None,
        ),
        zone=zone,
        price_per_hour=group.pricePerHour
        if group.pricePerHour is not None
        else (entry.price_per_hour if entry else 0.0),
        labels=labels,
        taints=tuple(group.taints),
        template_labels={**labels, **(template.labels if template else {})},
        template_taints=tuple(template.taints) if template and template.taints else tuple(group.taints),
        min_size=group.minSize,
        max_size=group.maxSize,
        initial_size=group.initial_size,
        provisioning=group.provisioning,
    )
