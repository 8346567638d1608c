"""Which API versions the server serves, and the resources the live adapter reads and writes.

The test control plane is Kubernetes 1.20 (autoscaling/v2beta2 and policy/v1beta1 only); current
clusters serve autoscaling/v2 and policy/v1 (and stopped serving the betas). So versions are chosen
from ``/apis`` discovery, preferring the GA one, once at start. :class:`ResourceKind` builds the REST
paths the raw client uses; :func:`lightkube_resource` gives a generic lightkube resource for code that
prefers lightkube's client (its installed models lack the 1.20 betas).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lightkube.generic_resource import create_global_resource, create_namespaced_resource

from kubetide.kube.rest import Rest

__all__ = [
    "CAPACITY_GROUP",
    "DiscoveryError",
    "ResourceKind",
    "ServedVersions",
    "discover",
    "lightkube_resource",
    "resource_kinds",
]

CAPACITY_GROUP = "autoscaling.x-k8s.io"
# Preference order per group: the first version served wins.
_PREFERRED = {
    "autoscaling": ("v2", "v2beta2"),
    "policy": ("v1", "v1beta1"),
    "coordination.k8s.io": ("v1",),
}


@dataclass(frozen=True, slots=True)
class ServedVersions:
    autoscaling: str = "v2"
    policy: str = "v1"
    coordination: str = "v1"

    @property
    def pdb_empty_selector_matches_all(self) -> bool:
        """policy/v1 changed it: an empty selector matches every pod; in v1beta1 it matches none."""
        return self.policy != "v1beta1"


class DiscoveryError(Exception):
    """The server serves none of the versions kubetide knows for a group it needs."""


def discover(rest: Rest) -> ServedVersions:
    """The preferred served version of each group the live adapter uses, from ``GET /apis``."""
    groups = rest.request("GET", "/apis").get("groups") or []
    served = {g["name"]: {v["version"] for v in g.get("versions") or []} for g in groups}
    chosen: dict[str, str] = {}
    for group, preference in _PREFERRED.items():
        versions = [v for v in preference if v in served.get(group, set())]
        if not versions:
            raise DiscoveryError(f"the API server serves none of {group}/{', '.join(preference)}")
        chosen[group] = versions[0]
    return ServedVersions(chosen["autoscaling"], chosen["policy"], chosen["coordination.k8s.io"])


@dataclass(frozen=True, slots=True)
class ResourceKind:
    """A resource's coordinates: ``group`` "" is the core group (``/api/v1``)."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
        """The collection (all namespaces when ``namespace`` is None), or one object and a subresource."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace is not None:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{name}"
            if sub:
                base += f"/{sub}"
        return base


def resource_kinds(versions: ServedVersions) -> dict[str, ResourceKind]:
    """Every resource the live components use, by plural, at the served versions."""
    kinds = [
        ResourceKind("", "v1", "Node", "nodes", namespaced=False),
        ResourceKind("", "v1", "Pod", "pods"),
        ResourceKind("", "v1", "ConfigMap", "configmaps"),
        ResourceKind("", "v1", "Event", "events"),
        ResourceKind("", "v1", "ReplicationController", "replicationcontrollers"),
        ResourceKind("apps", "v1", "ReplicaSet", "replicasets"),
        ResourceKind("apps", "v1", "StatefulSet", "statefulsets"),
        ResourceKind("apps", "v1", "DaemonSet", "daemonsets"),
        ResourceKind("apps", "v1", "Deployment", "deployments"),
        ResourceKind("batch", "v1", "Job", "jobs"),
        ResourceKind("policy", versions.policy, "PodDisruptionBudget", "poddisruptionbudgets"),
        ResourceKind(
            "autoscaling", versions.autoscaling, "HorizontalPodAutoscaler", "horizontalpodautoscalers"
        ),
        ResourceKind("coordination.k8s.io", versions.coordination, "Lease", "leases"),
        # The capacity APIs (CA's CRDs, deploy/rbac/crd-*.yaml), at the versions those CRDs store.
        ResourceKind("", "v1", "PodTemplate", "podtemplates"),
        ResourceKind(CAPACITY_GROUP, "v1beta1", "CapacityBuffer", "capacitybuffers"),
        ResourceKind(CAPACITY_GROUP, "v1", "ProvisioningRequest", "provisioningrequests"),
        ResourceKind(CAPACITY_GROUP, "v1alpha1", "CapacityQuota", "capacityquotas", namespaced=False),
    ]
    return {k.plural: k for k in kinds}


def lightkube_resource(kind: ResourceKind) -> Any:
    """A generic lightkube resource class for ``kind`` (for the betas lightkube-models lacks)."""
    create = create_namespaced_resource if kind.namespaced else create_global_resource
    return create(kind.group, kind.version, kind.kind, kind.plural)
