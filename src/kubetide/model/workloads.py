"""Typed views of scale targets (Deployment, ReplicaSet, StatefulSet, ReplicationController).

The HPA reads a target through its scale subresource: ``spec.replicas``, ``status.replicas`` and the
selector; these views expose exactly that, plus the pod template the simulator stamps pods from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubetide.model.fields import Node
from kubetide.model.selectors import LabelSelector

__all__ = ["SCALABLE_KINDS", "ScaleTarget"]

SCALABLE_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")


@dataclass(frozen=True, slots=True)
class ScaleTarget:
    kind: str
    name: str
    namespace: str = "default"
    replicas: int = 1
    status_replicas: int = 0
    selector: LabelSelector = field(default_factory=LabelSelector)
    template: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    labels: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "") -> ScaleTarget:
        root = Node(manifest, path)
        kind = root.get("kind").enum(SCALABLE_KINDS)
        meta, spec = root.get("metadata"), root.get("spec")
        sel = spec.get("selector")
        if kind == "ReplicationController":
            # RCs use a plain map selector, defaulting to the template's labels.
            labels = sel.string_map() or spec.get("template").get("metadata").get("labels").string_map()
            selector = LabelSelector.parse(Node({"matchLabels": labels}, sel.path))
        else:
            if sel.value is None:
                raise sel.error("is required")
            selector = LabelSelector.parse(sel)
        template = spec.get("template")
        return cls(
            kind=kind,
            name=meta.get("name").str(),
            namespace=meta.get("namespace").str("default"),
            replicas=spec.get("replicas").int(1, minimum=0),
            status_replicas=root.get("status").get("replicas").int(0, minimum=0),
            selector=selector,
            template=dict(template.mapping()),
            labels=meta.get("labels").string_map(),
        )
