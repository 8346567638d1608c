"""The Node objects the kwok provider creates: the group's template with a name, the providerID
``kwok://<group>/<node>``, and the labels CA and the node agent key on."""

from __future__ import annotations

import copy
import random
from dataclasses import replace

from kubetide.live.providers.kwok.api import Obj
from kubetide.live.providers.kwok.config import KwokGroupConfig
from kubetide.model.node import HOSTNAME_LABEL, NodeView

__all__ = ["GROUP_LABEL", "PROVIDER_SCHEME", "new_node_name", "node_manifest", "provider_id", "template_view"]

GROUP_LABEL = "kubetide.io/node-group"
PROVIDER_SCHEME = "kwok://"
# generateName's alphabet: no vowels (no words) and no look-alike characters.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def provider_id(group: str, node: str) -> str:
    return f"{PROVIDER_SCHEME}{group}/{node}"


def new_node_name(group: str, rng: random.Random, taken: set[str]) -> str:
    while True:
        name = f"{group}-{''.join(rng.choice(_ALPHABET) for _ in range(5))}"
        if name not in taken:
            return name


def node_manifest(group: KwokGroupConfig, name: str) -> Obj:
    template = copy.deepcopy(group.template)
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    status = template.get("status") or {}
    capacity = status.get("capacity") or status.get("allocatable") or {}
    allocatable = status.get("allocatable") or capacity
    labels = {**(meta.get("labels") or {}), GROUP_LABEL: group.name, HOSTNAME_LABEL: name}
    metadata: Obj = {"name": name, "labels": labels}
    if meta.get("annotations"):
        metadata["annotations"] = meta["annotations"]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "spec": {**spec, "providerID": provider_id(group.name, name)},
        # Only the resources: conditions, addresses and nodeInfo are the node agent's to post.
        "status": {"capacity": capacity, "allocatable": allocatable},
    }


def template_view(group: KwokGroupConfig) -> NodeView:
    """What a new node of ``group`` looks like, for scale-from-zero: Ready, as it will be once up."""
    view = NodeView.from_manifest(node_manifest(group, f"{group.name}-template"))
    return replace(view, ready=True)
