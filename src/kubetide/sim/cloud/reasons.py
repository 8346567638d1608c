"""The event reasons the simulated cloud and its kubelets emit, and their messages (scenario spec §10.2).

Cloud events use the instance as the object; kubelet events the Node, with the wording Kubernetes uses
where it has one (``Node X status is now: NodeReady``). Every event's ``data`` carries ``group`` and
``instance`` (the providerID, equal to ``Instance.id``, so it joins with Cluster Autoscaler's events),
kubelet events also ``node``, terminations also ``reason`` (who asked).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["SOURCE_CLOUD", "SOURCE_KUBELET", "CloudReason", "KubeletReason"]

SOURCE_CLOUD = "cloud"
SOURCE_KUBELET = "kubelet"


class CloudReason(StrEnum):
    INSTANCE_CREATED = "InstanceCreated"
    INSTANCE_FAILED = "InstanceFailed"
    INSTANCE_TERMINATED = "InstanceTerminated"


class KubeletReason(StrEnum):
    NODE_REGISTERED = "NodeRegistered"
    NODE_READY = "NodeReady"
    NODE_NOT_READY = "NodeNotReady"


def instance_object(short_id: str) -> str:
    return f"Instance/{short_id}"


def node_object(node_name: str) -> str:
    return f"Node/{node_name}"


def created_message(short_id: str, group: str, instance_type: str) -> str:
    return f"Instance {short_id} ({instance_type}) of group {group} is running"


def failed_message(short_id: str, group: str, code: str, detail: str) -> str:
    return f"Instance {short_id} of group {group} failed to launch: {code}: {detail}"


def terminated_message(short_id: str, group: str, requested_by: str) -> str:
    return f"Instance {short_id} of group {group} terminated (requested by {requested_by})"


def registered_message(node_name: str) -> str:
    # The node lifecycle controller's wording for RegisteredNode.
    return f"Node {node_name} event: Registered Node {node_name} in Controller"


def readiness_message(node_name: str, ready: bool) -> str:
    # The kubelet's wording: "Node <name> status is now: NodeReady".
    return f"Node {node_name} status is now: {'NodeReady' if ready else 'NodeNotReady'}"
