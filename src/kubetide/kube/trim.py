"""What the watch caches keep of each object: the fields the decisions read, not the rest.

A pod as the API returns it carries managed fields, the last-applied configuration, environment,
probes, images and container statuses: several times what ``Pod.from_manifest`` parses. At 30,000
pods that is the difference between a cache of a few hundred MB and one of several GB, so each object
is trimmed once, on arrival (after :mod:`kubetide.kube.schema` already skipped most of it while
decoding). Trimming only removes, and nothing a decision reads: the one field a view shows that goes
is kubectl's last-applied-configuration annotation, a second copy of the manifest (a test checks that
otherwise a trimmed manifest converts to the same view).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["TRIMS", "trim_metadata", "trim_node", "trim_pod"]

Json = dict[str, Any]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# What Container.parse reads; everything else of a container (image, env, probes, mounts) is dropped.
_CONTAINER_KEYS = ("name", "resources", "ports", "restartPolicy")
_NODE_STATUS_DROP = ("images", "volumesInUse", "volumesAttached", "daemonEndpoints", "config")
_POD_STATUS_DROP = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")


def trim_metadata(obj: Json) -> Json:
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED, None)
    return obj


def trim_node(obj: Json) -> Json:
    trim_metadata(obj)
    status = obj.get("status")
    if isinstance(status, dict):
        for key in _NODE_STATUS_DROP:
            status.pop(key, None)
    return obj


def _containers(items: Any) -> Any:
    if not isinstance(items, list):
        return items
    return [{k: c[k] for k in _CONTAINER_KEYS if k in c} if isinstance(c, dict) else c for c in items]


def trim_pod(obj: Json) -> Json:
    trim_metadata(obj)
    spec = obj.get("spec")
    if isinstance(spec, dict):
        for key in ("containers", "initContainers"):
            if key in spec:
                spec[key] = _containers(spec[key])
        spec.pop("ephemeralContainers", None)
    status = obj.get("status")
    if isinstance(status, dict):
        for key in _POD_STATUS_DROP:
            status.pop(key, None)
    return obj


# By plural; resources not listed keep everything but managed fields and the last-applied annotation.
TRIMS: dict[str, Callable[[Json], Json]] = {"nodes": trim_node, "pods": trim_pod}
