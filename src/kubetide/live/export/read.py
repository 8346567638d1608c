"""Listing what the export needs from a live API server: the only I/O of ``scenario from-cluster``.

Objects are listed as raw JSON (lightkube's generic resources, never its typed models: those would drop
fields they do not know and the export must see what the server holds). Versions are discovered the
way the live contract asks: autoscaling/v2 else v2beta2, policy/v1 else v1beta1, and kubetide's own
HPA CRD when it is installed; a 404 means "not served here", any other error is the caller's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lightkube import Client
from lightkube.core.exceptions import ApiError
from lightkube.core.resource import ApiInfo, ResourceDef
from lightkube.generic_resource import GenericGlobalResource, GenericNamespacedResource

from kubetide.live.export.objects import PRIORITY_EXPANDER_CONFIGMAP
from kubetide.live.export.snapshot import ClusterObjects, Manifest

__all__ = ["read_cluster"]

_VERBS = ["list", "global_list"]


def _resource(group: str, version: str, kind: str, plural: str, *, namespaced: bool = True) -> Any:
    # Built here, not with create_*_resource: those return lightkube's typed model when one is
    # registered for the kind, and the registry is process-wide.
    base: type = GenericNamespacedResource if namespaced else GenericGlobalResource
    info = ApiInfo(resource=ResourceDef(group, version, kind), plural=plural, verbs=_VERBS)
    return type(kind, (base,), {"_api_info": info})


def _list(
    client: Client,
    group: str,
    version: str,
    kind: str,
    plural: str,
    *,
    namespaced: bool = True,
    fields: dict[str, Any] | None = None,
) -> list[Manifest]:
    resource = _resource(group, version, kind, plural, namespaced=namespaced)
    api_version = f"{group}/{version}" if group else version
    if namespaced:
        items = client.list(resource, namespace="*", fields=fields)
    else:
        items = client.list(resource, fields=fields)
    # A List's items carry no apiVersion/kind: put them back, first, as kubectl prints them.
    return [{"apiVersion": api_version, "kind": kind, **dict(item)} for item in items]


def _served(client: Client, versions: Iterable[tuple[str, str]], kind: str, plural: str) -> list[Manifest]:
    """The objects from the first of ``versions`` the server serves; none when it serves none."""
    for group, version in versions:
        try:
            return _list(client, group, version, kind, plural)
        except ApiError as exc:
            if exc.status.code != 404:
                raise
    return []


def read_cluster(client: Client) -> ClusterObjects:
    """Every object the export looks at, from the server ``client`` talks to (all namespaces)."""
    return ClusterObjects(
        nodes=_list(client, "", "v1", "Node", "nodes", namespaced=False),
        deployments=_list(client, "apps", "v1", "Deployment", "deployments"),
        statefulsets=_list(client, "apps", "v1", "StatefulSet", "statefulsets"),
        daemonsets=_list(client, "apps", "v1", "DaemonSet", "daemonsets"),
        jobs=_list(client, "batch", "v1", "Job", "jobs"),
        pods=_list(client, "", "v1", "Pod", "pods"),
        hpas=_served(
            client,
            (("autoscaling", "v2"), ("autoscaling", "v2beta2")),
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
        ),
        kubetide_hpas=_served(
            client,
            (("autoscaling.kubetide.io", "v1"),),
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
        ),
        pdbs=_served(
            client, (("policy", "v1"), ("policy", "v1beta1")), "PodDisruptionBudget", "poddisruptionbudgets"
        ),
        # Only CA's priority expander configuration is exported: the others are not even listed.
        configmaps=_list(
            client, "", "v1", "ConfigMap", "configmaps", fields={"metadata.name": PRIORITY_EXPANDER_CONFIGMAP}
        ),
    )
