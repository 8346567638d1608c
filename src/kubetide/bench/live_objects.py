"""Recorded-like API objects for the live bench: pods and nodes as a 1.20+ API server returns them.

Each pod looks like a Deployment's pod on a busy cluster: two or three containers with images,
commands, env, probes, mounts, requests and limits; labels, annotations (with kubectl's
last-applied configuration), an owner reference, managed fields, four status conditions and
container statuses. About 7 KB of JSON each, close to what ``kubectl get pod -o json`` prints. One
pod in thirty (1,000) is pending with kube-scheduler's ``Unschedulable`` message. Nodes carry the images list
and managed fields the kubelet writes, which the cache trims.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any

import msgspec

__all__ = ["node_list", "pod_list"]

TS = "2026-11-23T20:00:00Z"


@functools.cache  # one object for every pod: the fixture is only serialized
def _managed(manager: str, n: int) -> list[dict[str, Any]]:
    fields: dict[str, Any] = {f"f:field{i}": {f"f:sub{j}": {} for j in range(6)} for i in range(n)}
    return [
        {
            "manager": manager,
            "operation": "Update",
            "apiVersion": "v1",
            "time": TS,
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        }
    ]


def _container(app: str, k: int, cpu: str, mem: str) -> dict[str, Any]:
    return {
        "name": f"{app}-{k}",
        "image": f"registry.example.com/team/{app}:1.{k}.3",
        "command": ["/bin/server"],
        "args": ["--port=8080", "--log-level=info", f"--shard={k}"],
        "env": [{"name": f"VAR_{i}", "value": f"value-{i}-{app}"} for i in range(6)],
        "ports": [{"name": "http", "containerPort": 8080 + k, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"cpu": "2", "memory": "1Gi"}},
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/app"},
            {
                "name": "kube-api-access",
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "readOnly": True,
            },
        ],
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": 8080 + k, "scheme": "HTTP"},
            "periodSeconds": 10,
        },
        "readinessProbe": {
            "httpGet": {"path": "/ready", "port": 8080 + k, "scheme": "HTTP"},
            "periodSeconds": 5,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }


def _pod(i: int, nodes: int) -> dict[str, Any]:
    app = f"app-{i % 300}"
    rs = f"{app}-7d9f8b6c5"
    pending = i % 30 == 29  # 1,000 of 30,000: CA's scalability scenario
    n_containers = 2 + i % 2
    containers = [
        _container(app, k, f"{100 + 50 * (i % 7)}m", f"{128 * (1 + i % 4)}Mi") for k in range(n_containers)
    ]
    conditions = [
        {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": TS}
        for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
    ]
    status: dict[str, Any] = {
        "phase": "Running",
        "conditions": conditions,
        "hostIP": f"10.0.{i % 250}.{i % 200}",
        "podIP": f"10.1.{i % 250}.{i % 200}",
        "podIPs": [{"ip": f"10.1.{i % 250}.{i % 200}"}],
        "startTime": TS,
        "qosClass": "Burstable",
        "containerStatuses": [
            {
                "name": c["name"],
                "state": {"running": {"startedAt": TS}},
                "lastState": {},
                "ready": True,
                "restartCount": 0,
                "image": c["image"],
                "imageID": f"docker-pullable://{c['image']}@sha256:{'ab' * 32}",
                "containerID": f"containerd://{'cd' * 32}",
                "started": True,
            }
            for c in containers
        ],
    }
    spec: dict[str, Any] = {
        "containers": containers,
        "volumes": [
            {"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
            {
                "name": "kube-api-access",
                "projected": {
                    "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}],
                    "defaultMode": 420,
                },
            },
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "nodeName": f"node-{i % nodes}",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        "priority": 0,
        "enableServiceLinks": True,
    }
    if pending:
        del spec["nodeName"]
        status = {
            "phase": "Pending",
            "qosClass": "Burstable",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "lastTransitionTime": TS,
                    "message": f"0/{nodes} nodes are available: {nodes} Insufficient cpu.",
                }
            ],
        }
    labels = {"app": app, "pod-template-hash": "7d9f8b6c5", "team": f"team-{i % 12}", "tier": "backend"}
    return {
        "metadata": {
            "name": f"{rs}-{i:06x}",
            "generateName": f"{rs}-",
            "namespace": f"ns-{i % 40}",
            "uid": f"6f1c2a4e-0000-4000-8000-{i:012d}",
            "resourceVersion": str(100000 + i),
            "creationTimestamp": TS,
            "labels": labels,
            "annotations": {
                "prometheus.io/scrape": "true",
                "kubectl.kubernetes.io/last-applied-configuration": msgspec.json.encode(
                    {"spec": {"containers": containers[:1]}}
                ).decode(),
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": rs,
                    "uid": f"rs-uid-{i % 300}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": _managed("kube-controller-manager", 8) + _managed("kubelet", 6),
        },
        "spec": spec,
        "status": status,
    }


def _node(i: int) -> dict[str, Any]:
    cap = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "metadata": {
            "name": f"node-{i}",
            "uid": f"node-uid-{i}",
            "resourceVersion": str(5000 + i),
            "creationTimestamp": TS,
            "labels": {
                "kubernetes.io/hostname": f"node-{i}",
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": "m5.2xlarge",
                "topology.kubernetes.io/zone": f"eu-west-1{'abc'[i % 3]}",
                "topology.kubernetes.io/region": "eu-west-1",
                "kubetide.io/node-group": f"group-{i % 5}",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "managedFields": _managed("kubelet", 20),
        },
        "spec": {"providerID": f"aws:///eu-west-1a/i-{i:017x}", "podCIDR": f"10.1.{i % 250}.0/24"},
        "status": {
            "capacity": cap,
            "allocatable": {**cap, "cpu": "7910m", "memory": "31Gi"},
            "conditions": [
                {
                    "type": t,
                    "status": "True" if t == "Ready" else "False",
                    "lastHeartbeatTime": TS,
                    "lastTransitionTime": TS,
                    "reason": "KubeletReady",
                    "message": "ok",
                }
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{i % 250}.{i % 200}"},
                {"type": "Hostname", "address": f"node-{i}"},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "kubeletVersion": "v1.20.2",
                "osImage": "Debian GNU/Linux 12",
                "containerRuntimeVersion": "containerd://1.6.20",
            },
            "images": [
                {
                    "names": [f"registry.example.com/team/app-{k}:1.0.3@sha256:{'ef' * 32}"],
                    "sizeBytes": 123456789,
                }
                for k in range(40)
            ],
        },
    }


def _pages(kind: str, count: int, make: Callable[[int], dict[str, Any]], page: int) -> list[bytes]:
    """Page by page, so only one page's objects exist at a time (150,000 pods as dicts would take GBs)."""
    out = []
    was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived dicts, none of them cyclic garbage
    try:
        for start in range(0, count, page):
            more = start + page < count
            meta: dict[str, Any] = {"resourceVersion": "200000"}
            if more:
                meta["continue"] = str(start + page)
            items = [make(i) for i in range(start, min(start + page, count))]
            out.append(
                msgspec.json.encode({"kind": kind, "apiVersion": "v1", "metadata": meta, "items": items})
            )
    finally:
        if was_enabled:
            gc.enable()
    return out


def pod_list(count: int, nodes: int, page: int = 500) -> list[bytes]:
    """The pages of a paged PodList (``limit=page``) as the API server sends them."""
    return _pages("PodList", count, lambda i: _pod(i, nodes), page)


def node_list(count: int, page: int = 500) -> list[bytes]:
    return _pages("NodeList", count, _node, page)
