"""What the caches keep converts to the same views as the full objects (schema + trim lose nothing read)."""

from __future__ import annotations

import json

import msgspec

from kubetide.bench.live_objects import node_list, pod_list
from kubetide.kube.schema import list_decoder
from kubetide.kube.trim import LAST_APPLIED, trim_node, trim_pod
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod


def test_decoded_and_trimmed_pods_and_nodes_give_the_same_views() -> None:
    (pods,) = pod_list(20, 5, page=50)
    full = json.loads(pods)["items"]
    full[3]["spec"]["initContainers"] = [
        {"name": "init", "image": "x", "resources": {"requests": {"cpu": "2"}}}
    ]
    full[4]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                ]
            }
        }
    }
    full[5]["metadata"]["deletionTimestamp"] = "2026-11-23T20:10:00Z"
    raw = msgspec.json.encode({"metadata": {}, "items": full})
    kept = [trim_pod(p) for p in list_decoder("pods").decode(raw)["items"]]
    expected = [repr(Pod.from_manifest(p)) for p in full]
    for p in full:  # the one thing dropped that a view shows: kubectl's copy of the applied manifest
        p["metadata"]["annotations"].pop(LAST_APPLIED)
    assert [repr(Pod.from_manifest(p)) for p in kept] == [repr(Pod.from_manifest(p)) for p in full]
    assert expected != [repr(Pod.from_manifest(p)) for p in kept]
    assert len(msgspec.json.encode(kept)) < len(raw) / 3
    (nodes,) = node_list(3)
    full_nodes = json.loads(nodes)["items"]
    full_nodes[1]["spec"]["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    kept_nodes = [
        trim_node(n)
        for n in list_decoder("nodes").decode(msgspec.json.encode({"items": full_nodes}))["items"]
    ]
    assert [repr(NodeView.from_manifest(n)) for n in kept_nodes] == [
        repr(NodeView.from_manifest(n)) for n in full_nodes
    ]
