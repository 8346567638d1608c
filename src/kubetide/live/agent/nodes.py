"""What the agent writes for a node it owns: its Lease renewal and its status, as the kubelet writes them.

Why both: in 1.20 the node lifecycle controller takes a node's liveness from its Lease in
``kube-node-lease`` (renewed every 10 s; without renewal, and without a fresh Ready heartbeat, the node is
marked Unknown after the 40 s grace period), and from the Ready *condition* whether it is ready: only a
Ready=True condition lifts the ``node.kubernetes.io/not-ready`` taint. So the agent renews the Lease
every round and posts the status when the node is not yet Ready by our hand or the heartbeat is older
than :data:`STATUS_REFRESH_S` (the kubelet re-posts an unchanged status every 5 minutes; we do it more
often, which is harmless and survives a controller restart that forgets the Lease).
"""

from __future__ import annotations

from typing import Any

from kubetide import __version__
from kubetide.live.agent.api import Obj
from kubetide.live.agent.timefmt import format_micro_time, format_time, parse_time

__all__ = [
    "KUBELET_VERSION",
    "LEASE_DURATION_S",
    "STATUS_REFRESH_S",
    "lease_for",
    "lease_renewal",
    "node_internal_ip",
    "node_status_patch",
    "status_is_due",
]

KUBELET_VERSION = "v1.20.2-kubetide"
LEASE_DURATION_S = 40  # the kubelet's default: 4 x the 10 s renew interval
STATUS_REFRESH_S = 60.0
READY_REASON = "KubeletReady"
READY_MESSAGE = "kubelet is posting ready status"

_PRESSURES = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


def lease_for(node: Obj, now: float) -> Obj:
    """A new Lease for ``node``, owned by it (as the kubelet sets it) so it goes when the node goes."""
    meta = node["metadata"]
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": meta["name"],
            "namespace": "kube-node-lease",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta.get("uid", "")}
            ],
        },
        "spec": {
            "holderIdentity": meta["name"],
            "leaseDurationSeconds": LEASE_DURATION_S,
            "renewTime": format_micro_time(now),
        },
    }


def lease_renewal(node: Obj, now: float) -> Obj:
    """A merge patch renewing the Lease; also (re)asserts holder and duration, and the owner if missing."""
    meta = node["metadata"]
    return {
        "metadata": {
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta.get("uid", "")}
            ]
        },
        "spec": {
            "holderIdentity": meta["name"],
            "leaseDurationSeconds": LEASE_DURATION_S,
            "renewTime": format_micro_time(now),
        },
    }


def _conditions(node: Obj) -> dict[str, dict[str, Any]]:
    status = node.get("status") or {}
    return {c.get("type", ""): c for c in status.get("conditions") or []}


def status_is_due(node: Obj, now: float) -> bool:
    """Whether to post the node status: not Ready by our hand yet, or the heartbeat is getting old."""
    ready = _conditions(node).get("Ready")
    if ready is None or ready.get("status") != "True" or ready.get("reason") != READY_REASON:
        return True
    heartbeat = parse_time(ready.get("lastHeartbeatTime"))
    return heartbeat is None or now - heartbeat >= STATUS_REFRESH_S


def node_internal_ip(node: Obj) -> str | None:
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address.get("address"))
    return None


def node_status_patch(node: Obj, now: float, internal_ip: str) -> Obj:
    """The status the kubelet posts for a healthy node. Transition times are kept while a condition's
    status does not change, as the kubelet keeps them."""
    existing = _conditions(node)
    stamp = format_time(now)

    def condition(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
        old = existing.get(kind)
        same = old is not None and old.get("status") == status
        transition = old.get("lastTransitionTime") if same and old is not None else stamp
        return {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastHeartbeatTime": stamp,
            "lastTransitionTime": transition,
        }

    conditions = [condition(kind, "False", reason, message) for kind, reason, message in _PRESSURES]
    conditions.append(condition("Ready", "True", READY_REASON, READY_MESSAGE))
    name = node["metadata"]["name"]
    status: Obj = {
        "conditions": conditions,
        "addresses": [
            {"type": "InternalIP", "address": internal_ip},
            {"type": "Hostname", "address": name},
        ],
        "nodeInfo": {
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
            "containerRuntimeVersion": f"kubetide://{__version__}",
            "operatingSystem": "linux",
            "architecture": "amd64",
            "osImage": "kubetide node-agent",
            "kernelVersion": "",
            "machineID": name,
            "systemUUID": name,
            "bootID": "",
        },
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
    }
    current = node.get("status") or {}
    # A Node created without capacity (by hand, say) would never fit a pod: give it a small default.
    if not current.get("capacity"):
        status["capacity"] = {"cpu": "1", "memory": "1Gi", "pods": "110"}
    if not current.get("allocatable"):
        status["allocatable"] = current.get("capacity") or status["capacity"]
    return {"status": status}
