"""``PodTemplate`` (``v1``): the pod shape a CapacityBuffer or a ProvisioningRequest names, read into a view.

The template's pod is read as the Pod it stands for (``GetPodFromTemplate``: its labels, annotations
and spec), so the cores can stamp fake pods from it by ``evolve``; the manifest of ``template`` is kept
as written, for the buffer controller's managed copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.model.fields import Node
from kubetide.model.pod import OwnerRef, Pod

__all__ = ["PodTemplateView", "template_pod"]


def template_pod(template: Mapping[str, Any], namespace: str, path: str = "") -> Pod:
    """The pod a ``PodTemplateSpec`` makes (no name yet): its metadata's labels and annotations, its spec."""
    meta = dict(template.get("metadata") or {})
    pod_meta = {
        "name": "template",
        "namespace": namespace,
        "labels": meta.get("labels") or {},
        "annotations": meta.get("annotations") or {},
    }
    return Pod.from_manifest({"metadata": pod_meta, "spec": template.get("spec") or {}}, path).evolve(name="")


@dataclass(frozen=True, slots=True)
class PodTemplateView:
    name: str
    namespace: str
    generation: int
    pod: Pod
    template: Mapping[str, Any] = field(hash=False, compare=False)
    owner: OwnerRef | None = None  # its controller (a CapacityBuffer for a managed template)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "") -> PodTemplateView:
        root = Node(manifest, path)
        meta = root.get("metadata")
        namespace = meta.get("namespace").str("default")
        template = root.get("template")
        owner = None
        for ref in meta.get("ownerReferences").list():
            if ref.get("controller").bool(False):
                owner = OwnerRef(ref.get("kind").str(), ref.get("name").str(), ref.get("uid").str(""), True)
        return cls(
            name=meta.get("name").str(),
            namespace=namespace,
            generation=meta.get("generation").int(0),
            pod=template_pod(template.mapping(), namespace, template.path),
            template=dict(template.mapping()),
            owner=owner,
        )
