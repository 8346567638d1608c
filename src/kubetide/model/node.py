"""Typed, immutable view of a Node: allocatable resources, labels, taints, readiness."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubetide.model.fields import Node as Field
from kubetide.model.resources import EMPTY, Resources
from kubetide.model.scheduling_terms import Taint

__all__ = ["NodeView"]

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


@dataclass(frozen=True, slots=True)
class NodeView:
    name: str
    labels: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    annotations: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    allocatable: Resources = EMPTY
    capacity: Resources = EMPTY
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    ready: bool = True
    provider_id: str = ""
    creation_time: float | None = None
    deletion_time: float | None = None
    # status.addresses' values (InternalIP, Hostname, ...): how a Node without providerID is matched.
    addresses: tuple[str, ...] = field(default=(), hash=False, compare=False)

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "") -> NodeView:
        root = Field(manifest, path)
        meta, spec, status = root.get("metadata"), root.get("spec"), root.get("status")
        ready = False
        for cond in status.get("conditions").list():
            if cond.get("type").str() == "Ready":
                ready = cond.get("status").str() == "True"
        capacity = Resources.parse(status.get("capacity").value, status.get("capacity").path)
        alloc = status.get("allocatable")
        name = meta.get("name").str()
        labels = meta.get("labels").string_map()
        labels.setdefault(HOSTNAME_LABEL, name)
        return cls(
            name=name,
            labels=labels,
            annotations=meta.get("annotations").string_map(),
            allocatable=Resources.parse(alloc.value, alloc.path) if alloc.value is not None else capacity,
            capacity=capacity,
            taints=tuple(Taint.parse(t) for t in spec.get("taints").list()),
            unschedulable=spec.get("unschedulable").bool(False),
            ready=ready,
            provider_id=spec.get("providerID").str(""),
            creation_time=meta.get("creationTimestamp").time(None),
            deletion_time=meta.get("deletionTimestamp").time(None),
            addresses=tuple(a.get("address").str("") for a in status.get("addresses").list()),
        )

    @property
    def zone(self) -> str | None:
        return self.labels.get(ZONE_LABEL)
