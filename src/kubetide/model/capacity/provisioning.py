"""``ProvisioningRequest`` (``autoscaling.x-k8s.io/v1``, and ``v1beta1``): capacity asked for a batch of pods,
as Cluster Autoscaler defines it (``apis/provisioningrequest``), read into a view.

``spec.podSets`` (1 to 32, each a PodTemplate of the same namespace and a count of at least 1),
``spec.provisioningClassName`` (``check-capacity.autoscaling.x-k8s.io``,
``best-effort-atomic-scale-up.autoscaling.x-k8s.io``, or another class CA leaves alone) and
``spec.parameters`` (``noRetry``, ``processorInstance``, ``ValidUntilSeconds``); ``status.conditions``
(Accepted, Provisioned, Failed, BookingExpired, CapacityRevoked). The CRD's rules are checked here,
every problem at once with its path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.model.capacity.conditions import Condition, parse_conditions
from kubetide.model.capacity.reading import Problems, api_version, known_fields
from kubetide.model.fields import Node

__all__ = [
    "ACCEPTED",
    "ATOMIC_CLASS",
    "BOOKING_EXPIRED",
    "CAPACITY_REVOKED",
    "CHECK_CAPACITY_CLASS",
    "CONSUME_ANNOTATION",
    "DEPRECATED_CONSUME_ANNOTATION",
    "FAILED",
    "PROVISIONED",
    "PROVREQ_API_VERSIONS",
    "PodSet",
    "ProvisioningRequest",
]

GROUP = "autoscaling.x-k8s.io"
PROVREQ_API_VERSIONS = (f"{GROUP}/v1", f"{GROUP}/v1beta1")
CHECK_CAPACITY_CLASS = "check-capacity.autoscaling.x-k8s.io"
ATOMIC_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
# Pods that consume a request's capacity name it (the deprecated key is still read, as CA reads it).
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
DEPRECATED_CONSUME_ANNOTATION = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
ACCEPTED, PROVISIONED, FAILED = "Accepted", "Provisioned", "Failed"
BOOKING_EXPIRED, CAPACITY_REVOKED = "BookingExpired", "CapacityRevoked"

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True, slots=True)
class PodSet:
    template: str  # the PodTemplate's name, in the request's namespace
    count: int


@dataclass(frozen=True, slots=True)
class ProvisioningRequest:
    name: str
    namespace: str = "default"
    uid: str = ""
    generation: int = 0
    creation_time: float | None = None
    api_version: str = PROVREQ_API_VERSIONS[0]
    pod_sets: tuple[PodSet, ...] = ()
    class_name: str = ""
    parameters: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    conditions: tuple[Condition, ...] = ()
    class_details: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def status_manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {"conditions": [c.to_manifest() for c in self.conditions]}
        if self.class_details:
            out["provisioningClassDetails"] = dict(self.class_details)
        return out

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "") -> ProvisioningRequest:
        root = Node(manifest, path)
        problems = Problems()
        meta, spec, status = root.get("metadata"), root.get("spec"), root.get("status")
        version = api_version(root, PROVREQ_API_VERSIONS, problems)
        known_fields(spec, ("podSets", "provisioningClassName", "parameters"), problems)
        known_fields(status, ("conditions", "provisioningClassDetails"), problems)
        pod_sets = []
        sets: list[Node] = problems.take(lambda: spec.get("podSets").list(), [])
        if spec.get("podSets").value is None or (len(sets) < 1):
            problems.add(spec.get("podSets"), "must have at least 1 item")
        elif len(sets) > 32:
            problems.add(spec.get("podSets"), f"must have at most 32 items, got {len(sets)}")
        for item in sets:
            known_fields(item, ("podTemplateRef", "count"), problems)
            ref = item.get("podTemplateRef")
            known_fields(ref, ("name",), problems)
            name: str = problems.take(lambda ref=ref: ref.get("name").str(), "")  # type: ignore[misc]
            if name and (len(name) > 253 or not _SUBDOMAIN.match(name)):
                problems.add(ref.get("name"), f"must be a DNS subdomain name, got {name!r}")
            count: int = problems.take(lambda item=item: item.get("count").int(minimum=1), 0)  # type: ignore[misc]
            if count > 2**31 - 1:
                problems.add(item.get("count"), f"must be <= {2**31 - 1} (got {count})")
            pod_sets.append(PodSet(name, count))
        class_node = spec.get("provisioningClassName")
        class_name = problems.take(lambda: class_node.str(), "")
        if class_name and (len(class_name) > 253 or not _SUBDOMAIN.match(class_name)):
            problems.add(class_node, f"must be a DNS subdomain name, got {class_name!r}")
        parameters: dict[str, str] = problems.take(lambda: spec.get("parameters").string_map(), {})
        if len(parameters) > 100:
            problems.add(spec.get("parameters"), f"must have at most 100 entries, got {len(parameters)}")
        for key, value in parameters.items():
            if len(value) > 255:
                problems.add(spec.get("parameters").get(key), "must be at most 255 characters")
        request = cls(
            name=problems.take(lambda: meta.get("name").str(), ""),
            namespace=problems.take(lambda: meta.get("namespace").str("default"), "default"),
            uid=problems.take(lambda: meta.get("uid").str(""), ""),
            generation=problems.take(lambda: meta.get("generation").int(0), 0),
            creation_time=problems.take(lambda: meta.get("creationTimestamp").time(None), None),
            api_version=version,
            pod_sets=tuple(pod_sets),
            class_name=class_name,
            parameters=parameters,
            conditions=problems.take(lambda: parse_conditions(status.get("conditions")), ()),
            class_details=problems.take(lambda: status.get("provisioningClassDetails").string_map(), {}),
        )
        problems.raise_any()
        return request
