"""The capacity APIs' objects in the simulated API server: CapacityBuffers, ProvisioningRequests,
CapacityQuotas and PodTemplates, as a real API server keeps them.

:class:`CapacityStore` holds each object's manifest: created with a uid, a ``creationTimestamp`` (the
virtual clock's) and generation 1; a re-apply that changes the spec bumps the generation and keeps the
status (the CRDs have a status subresource; a PodTemplate's generation follows its template, as newer
API servers do); the autoscaler's writes (:meth:`CapacityStore.write`) replace a status, create or update
a managed PodTemplate, or delete a request. :meth:`CapacityStore.objects` gives the views the loop reads,
rebuilt only when something changed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from kubetide.cluster.capacity.objects import CapacityObjects, CapacityWrite, ScalableObject
from kubetide.model.capacity.buffer import CapacityBuffer
from kubetide.model.capacity.conditions import format_time
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.capacity.provisioning import ProvisioningRequest
from kubetide.model.capacity.quota import CapacityQuota

__all__ = ["CAPACITY_KINDS", "CapacityStore"]

CAPACITY_KINDS = frozenset({"CapacityBuffer", "ProvisioningRequest", "CapacityQuota", "PodTemplate"})
_STATUSED = frozenset({"CapacityBuffer", "ProvisioningRequest", "CapacityQuota"})


def _key(kind: str, namespace: str | None, name: str) -> str:
    return f"{kind}/{namespace or 'default'}/{name}"


# kind -> the API group CA's scalable-object resolvers name it by (scalable_object_resolvers.go).
_GROUPS = {"Deployment": "apps", "ReplicaSet": "apps", "StatefulSet": "apps", "Job": "batch"}
_SCALABLE = frozenset({"Deployment", "ReplicaSet", "StatefulSet"})  # those with a scale subresource


class CapacityStore:
    def __init__(self) -> None:
        self.manifests: dict[str, dict[str, Any]] = {}
        self._version = 0
        self._built: tuple[int, int, CapacityObjects] | None = None
        # The pod template of every workload applied (``Kind/namespace/name``), for buffers' scalableRefs.
        self.workload_templates: dict[str, Mapping[str, Any]] = {}

    def note_workload(self, key: str, manifest: Mapping[str, Any] | None) -> None:
        """A workload applied (its pod template kept) or deleted (None)."""
        if manifest is None:
            self.workload_templates.pop(key, None)
        else:
            self.workload_templates[key] = copy.deepcopy(
                dict((manifest.get("spec") or {}).get("template") or {})
            )

    def scalables(self, workloads: Mapping[str, Any]) -> dict[tuple[str, str, str, str], ScalableObject]:
        """Each workload as a buffer's ``scalableRef`` reads it: the scale subresource's replicas (its
        pods), its newest pod's template (the simulated pods are stamped from the template, so it is
        the template), its own template and replicas (a Job's parallelism)."""
        out = {}
        for key, template in self.workload_templates.items():
            workload = workloads.get(key)
            kind, namespace, name = key.split("/", 2)
            if workload is None or kind not in _GROUPS:
                continue
            replicas = getattr(workload, "replicas", None)
            if kind == "Job":
                replicas = getattr(workload, "parallelism", None)
            scale = len(workload.pods) if kind in _SCALABLE else None
            out[(_GROUPS[kind], kind, namespace, name)] = ScalableObject(
                scale_replicas=scale,
                recent_pod=template if scale and workload.pods else None,
                template=template,
                template_replicas=replicas,
            )
        return out

    def __bool__(self) -> bool:
        return bool(self.manifests)

    def apply(self, manifest: Mapping[str, Any], now: float) -> None:
        """``kubectl apply``: create, or update the spec (the status kept)."""
        kind = str(manifest["kind"])
        meta = manifest.get("metadata") or {}
        key = _key(kind, meta.get("namespace"), str(meta["name"]))
        new = copy.deepcopy(dict(manifest))
        new_meta = new.setdefault("metadata", {})
        old = self.manifests.get(key)
        if old is None:
            new_meta.setdefault("uid", f"uid-{key.replace('/', '-').lower()}")
            new_meta.setdefault("creationTimestamp", format_time(now))
            new_meta["generation"] = 1
        else:
            old_meta = old["metadata"]
            for field in ("uid", "creationTimestamp"):
                new_meta[field] = old_meta.get(field)
            body = "template" if kind == "PodTemplate" else "spec"
            same = new.get(body) == old.get(body)
            new_meta["generation"] = old_meta.get("generation", 1) + (0 if same else 1)
            if kind in _STATUSED and "status" in old:
                new["status"] = old["status"]
        self.manifests[key] = new
        self._version += 1

    def delete(self, key: str) -> bool:
        if self.manifests.pop(key, None) is None:
            return False
        self._version += 1
        return True

    def write(self, write: CapacityWrite, now: float) -> None:
        """One of the autoscaler's writes (a missing object is left alone, as a 404 would)."""
        key = _key(write.kind, write.namespace, write.name)
        if write.action == "delete":
            self.delete(key)
        elif write.action == "status":
            found = self.manifests.get(key)
            if found is not None:
                found["status"] = copy.deepcopy(dict(write.body))
                self._version += 1
        else:
            existing = self.manifests.get(key)
            if existing is None:
                self.apply(write.body, now)
            else:
                updated = copy.deepcopy(existing)
                updated["template"] = copy.deepcopy(dict(write.body.get("template") or {}))
                owners = (write.body.get("metadata") or {}).get("ownerReferences")
                if owners is not None:
                    updated["metadata"]["ownerReferences"] = copy.deepcopy(owners)
                self.apply(updated, now)

    def objects(
        self,
        scalables_version: int,
        scalables: Callable[[], Mapping[tuple[str, str, str, str], ScalableObject]],
    ) -> CapacityObjects | None:
        """The views of every object (None when there is none); ``scalables``: the workloads, rebuilt
        when ``scalables_version`` changes."""
        if not self.manifests:
            return None
        if self._built is not None and self._built[:2] == (self._version, scalables_version):
            return self._built[2]
        by_kind: dict[str, list[Any]] = {k: [] for k in CAPACITY_KINDS}
        for key, manifest in self.manifests.items():
            kind = key.split("/", 1)[0]
            by_kind[kind].append(_VIEWS[kind](manifest))
        templates = {t.key: t for t in by_kind["PodTemplate"]}
        built = CapacityObjects(
            buffers=tuple(by_kind["CapacityBuffer"]),
            provisioning_requests=tuple(by_kind["ProvisioningRequest"]),
            quotas=tuple(by_kind["CapacityQuota"]),
            pod_templates=templates,
            scalables=scalables() if by_kind["CapacityBuffer"] else {},
        )
        self._built = (self._version, scalables_version, built)
        return built


_VIEWS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "CapacityBuffer": CapacityBuffer.from_manifest,
    "ProvisioningRequest": ProvisioningRequest.from_manifest,
    "CapacityQuota": CapacityQuota.from_manifest,
    "PodTemplate": PodTemplateView.from_manifest,
}
