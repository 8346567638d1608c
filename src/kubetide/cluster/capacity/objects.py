"""What the capacity features read from the cluster and what they ask to write, as plain values.

:class:`CapacityObjects` is the part of the loop's :class:`~kubetide.cluster.loop.world.World` the
capacity APIs add: the CapacityBuffers, ProvisioningRequests and CapacityQuotas, the PodTemplates they
name, the workloads a buffer's ``scalableRef`` may name (:class:`ScalableObject`) and the objects that
could not be read (:class:`BrokenObject`, reported on themselves, never stopping the others).

The loop never writes itself: it returns :class:`CapacityWrite` values (a status, a managed
PodTemplate, a deletion) in its result, and the driver hands them to a :class:`CapacityPort` (the
simulated API server, or the live one through the guarded port).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from kubetide.model.capacity.buffer import CapacityBuffer
from kubetide.model.capacity.conditions import Condition
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.capacity.provisioning import ProvisioningRequest
from kubetide.model.capacity.quota import CapacityQuota

__all__ = [
    "BrokenObject",
    "CapacityObjects",
    "CapacityPort",
    "CapacityWrite",
    "ScalableObject",
]

CapacityKind = Literal["CapacityBuffer", "ProvisioningRequest", "CapacityQuota", "PodTemplate"]


@dataclass(frozen=True, slots=True)
class ScalableObject:
    """A workload a buffer's ``scalableRef`` names, as CA's two resolvers see it.

    ``scale_replicas``: its scale subresource's ``status.replicas`` (None: the kind has no scale
    subresource, or the object is missing); ``recent_pod``: the template of its most recent pod, by
    the scale's selector (``GetTemplateAndReplicas``: the pod's labels, annotations and spec, node name
    cleared); ``template`` and ``template_replicas``: the workload's own pod template and replicas
    (``spec.replicas``, a Job's ``parallelism``), for the kinds CA resolves (Deployment, ReplicaSet,
    StatefulSet, ReplicationController, Job).
    """

    scale_replicas: int | None = None
    recent_pod: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)
    template: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)
    template_replicas: int | None = None


@dataclass(frozen=True, slots=True)
class BrokenObject:
    """An object of the capacity APIs that could not be read, and why (reported, then skipped)."""

    kind: str
    namespace: str | None
    name: str
    message: str
    api_version: str = ""
    generation: int = 0
    conditions: tuple[Condition, ...] = ()  # its status's, when they could be read


@dataclass(frozen=True, slots=True)
class CapacityObjects:
    buffers: tuple[CapacityBuffer, ...] = ()
    provisioning_requests: tuple[ProvisioningRequest, ...] = ()
    quotas: tuple[CapacityQuota, ...] = ()
    pod_templates: Mapping[str, PodTemplateView] = field(default_factory=dict)  # "namespace/name"
    # (apiGroup, kind, namespace, name) -> the workload, for buffers with a scalableRef.
    scalables: Mapping[tuple[str, str, str, str], ScalableObject] = field(default_factory=dict)
    broken: tuple[BrokenObject, ...] = ()


@dataclass(frozen=True, slots=True)
class CapacityWrite:
    """One write the loop asks for.

    ``status``: replace the object's status (the status subresource) with ``body``; ``pod-template``:
    create the PodTemplate ``body`` or update its ``template`` and owner (the buffer controller's
    managed copy); ``delete``: delete the object (a ProvisioningRequest 7 days after its end, as CA).
    """

    action: Literal["status", "pod-template", "delete"]
    kind: CapacityKind
    namespace: str | None
    name: str
    api_version: str
    body: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def object(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{where}{self.name}"


@runtime_checkable
class CapacityPort(Protocol):
    """Where the capacity writes go (a :class:`~kubetide.model.api.ClusterPort` that can take them).
    ApiError: not written; the loop decides again next time."""

    def write_capacity(self, write: CapacityWrite) -> None: ...
