"""Kinds to API resources, as the HPA's RESTMapper resolves them: for scale targets and the custom
metrics API's described objects.

Upstream maps a kind through discovery. The kinds HPAs name in practice are fixed and known, so
they are listed here (no request needed); any other kind falls back to apimachinery's
``UnsafeGuessKindToResource`` (lower-case, then ``s``/``es``/``ies``), which is what the API server's
own naming convention gives for CRDs that do not choose an irregular plural. Scale targets of
unlisted kinds are resolved through discovery instead (see ``scale.py``), because there the exact
plural and the presence of a ``scale`` subresource matter.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KNOWN_KINDS", "GroupResource", "guess_resource", "resource_for"]


@dataclass(frozen=True, slots=True)
class GroupResource:
    group: str  # "" for the core group
    version: str
    resource: str

    @property
    def qualified(self) -> str:
        """``deployments.apps`` / ``pods``: how the custom metrics API names a resource."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def prefix(self) -> str:
        """The API path prefix of the group version."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


# Kind -> (group, preferred version, plural). Groups listed for the kinds of the built-in API server.
KNOWN_KINDS: dict[str, GroupResource] = {
    "Pod": GroupResource("", "v1", "pods"),
    "Service": GroupResource("", "v1", "services"),
    "Endpoints": GroupResource("", "v1", "endpoints"),
    "Node": GroupResource("", "v1", "nodes"),
    "Namespace": GroupResource("", "v1", "namespaces"),
    "ConfigMap": GroupResource("", "v1", "configmaps"),
    "PersistentVolumeClaim": GroupResource("", "v1", "persistentvolumeclaims"),
    "ReplicationController": GroupResource("", "v1", "replicationcontrollers"),
    "Deployment": GroupResource("apps", "v1", "deployments"),
    "ReplicaSet": GroupResource("apps", "v1", "replicasets"),
    "StatefulSet": GroupResource("apps", "v1", "statefulsets"),
    "DaemonSet": GroupResource("apps", "v1", "daemonsets"),
    "Job": GroupResource("batch", "v1", "jobs"),
    "CronJob": GroupResource("batch", "v1beta1", "cronjobs"),
    "Ingress": GroupResource("networking.k8s.io", "v1", "ingresses"),
    "HorizontalPodAutoscaler": GroupResource("autoscaling", "v2beta2", "horizontalpodautoscalers"),
}


def guess_resource(kind: str) -> str:
    """apimachinery's ``UnsafeGuessKindToResource``: the plural of a kind by English rules."""
    lower = kind.lower()
    if not lower:
        return lower
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def resource_for(api_version: str, kind: str) -> GroupResource:
    """The resource of ``kind`` in ``api_version`` ("" = the kind's usual group): listed kinds exactly,
    others by the guessed plural in the given group."""
    group, _, version = api_version.rpartition("/") if "/" in api_version else ("", "", api_version)
    known = KNOWN_KINDS.get(kind)
    if known is not None and (not api_version or group == known.group):
        return GroupResource(known.group, version or known.version, known.resource)
    return GroupResource(group, version or "v1", guess_resource(kind))
