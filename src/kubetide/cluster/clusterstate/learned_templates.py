"""Node templates learned from real nodes, as the data of a ConfigMap the autoscaler owns (kubetide;
upstream keeps them in memory only).

CA builds a group's template from one of its real nodes when it has one and caches it, so a group that
scales down to zero keeps its real shape; a restart loses the cache and the group falls back to the
provider's claimed template, which for scale-from-zero is often wrong (stale tags, no DaemonSets): the
group is skipped, or chosen for pods it cannot hold. kubetide writes the learned templates
(``kubetide-cluster-autoscaler-templates`` in ``--namespace``, key ``templates``, JSON) when they change
and reads them at start. A template keeps what scheduling reads: the node's labels, taints,
allocatable and capacity, and its DaemonSet pods' requests, host ports, labels and owners.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubetide.cloud.instance import NodeTemplate
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, HostPort, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint

__all__ = ["TEMPLATES_CONFIG_MAP", "TEMPLATES_KEY", "decode_templates", "encode_templates"]

TEMPLATES_CONFIG_MAP = "kubetide-cluster-autoscaler-templates"
TEMPLATES_KEY = "templates"
_VERSION = 1

Learned = Mapping[str, tuple[NodeTemplate, float]]  # group id -> (template, when it was learned)


def _pod(p: Pod) -> dict[str, Any]:
    ctrl = p.controller
    return {
        "name": p.name,
        "namespace": p.namespace,
        "labels": dict(p.labels),
        "owner": None if ctrl is None else {"kind": ctrl.kind, "name": ctrl.name, "uid": ctrl.uid},
        "requests": dict(p.requests),
        "hostPorts": [[h.port, h.protocol, h.host_ip] for h in p.host_ports],
        "priority": p.priority,
    }


def _node(n: NodeView) -> dict[str, Any]:
    return {
        "name": n.name,
        "labels": dict(n.labels),
        "taints": [[t.key, t.value, t.effect] for t in n.taints],
        "allocatable": dict(n.allocatable),
        "capacity": dict(n.capacity),
        "unschedulable": n.unschedulable,
    }


def encode_templates(learned: Learned) -> dict[str, str]:
    doc = {
        "version": _VERSION,
        "groups": {
            gid: {"learnedAt": at, "node": _node(t.node), "pods": [_pod(p) for p in t.pods]}
            for gid, (t, at) in sorted(learned.items())
        },
    }
    return {TEMPLATES_KEY: json.dumps(doc, sort_keys=True, separators=(",", ":"))}


def _decode_pod(d: Mapping[str, Any]) -> Pod:
    owner = d.get("owner")
    owners = (OwnerRef(str(owner["kind"]), str(owner["name"]), str(owner["uid"]), True),) if owner else ()
    ports = tuple(HostPort(int(port), str(proto), str(ip)) for port, proto, ip in d.get("hostPorts", []))
    container = Container(
        "app", Resources({str(k): int(v) for k, v in d["requests"].items()}), host_ports=ports
    )
    return Pod(
        str(d["name"]),
        namespace=str(d["namespace"]),
        labels={str(k): str(v) for k, v in d.get("labels", {}).items()},
        owners=owners,
        containers=(container,),
        priority=int(d.get("priority", 0)),
        phase="Running",
    )


def _decode_node(d: Mapping[str, Any]) -> NodeView:
    return NodeView(
        str(d["name"]),
        labels={str(k): str(v) for k, v in d.get("labels", {}).items()},
        taints=tuple(Taint(str(k), str(v), str(e)) for k, v, e in d.get("taints", [])),
        allocatable=Resources({str(k): int(v) for k, v in d["allocatable"].items()}),
        capacity=Resources({str(k): int(v) for k, v in d["capacity"].items()}),
        unschedulable=bool(d.get("unschedulable", False)),
    )


def decode_templates(data: Mapping[str, str] | None) -> dict[str, tuple[NodeTemplate, float]] | None:
    """The learned templates in a ConfigMap's data; None when absent or unreadable (the autoscaler then
    learns them again from the nodes, as upstream does)."""
    if not data or TEMPLATES_KEY not in data:
        return None
    try:
        doc = json.loads(data[TEMPLATES_KEY])
        if doc.get("version") != _VERSION:
            return None
        out = {}
        for gid, g in doc.get("groups", {}).items():
            pods = tuple(_decode_pod(p) for p in g.get("pods", []))
            out[str(gid)] = (NodeTemplate(_decode_node(g["node"]), pods), float(g["learnedAt"]))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return out
