"""What the simulated cloud tells the simulated cluster: events, and Nodes appearing, changing and going.

The simulated cluster implements :class:`CloudListener`. The cloud plays both the cloud API and the
machines' kubelets, so it decides *when* a Node registers or turns Ready and it emits the ``cloud`` and
the ``kubelet`` events itself (messages built in :mod:`kubetide.sim.cloud.reasons`); the listener only
records the events and updates its Node objects. Calls come in the order things happen: a state change
first, then its event, both at the same simulated time ``t``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubetide.model.node import NodeView

__all__ = ["CloudListener", "NodeAddress"]


@dataclass(frozen=True, slots=True)
class NodeAddress:
    """One entry of a Node's ``status.addresses`` (``InternalIP``, ``Hostname``), as the cloud reports it."""

    type: str
    address: str


class CloudListener(Protocol):
    def cloud_event(
        self, t: float, reason: str, obj: str, message: str, data: Mapping[str, object], /
    ) -> None:
        """Record a ``cloud`` event (InstanceCreated, InstanceFailed, InstanceTerminated)."""
        ...

    def kubelet_event(
        self, t: float, reason: str, obj: str, message: str, data: Mapping[str, object], /
    ) -> None:
        """Record a ``kubelet`` event (NodeRegistered, NodeReady, NodeNotReady)."""
        ...

    def register_node(
        self, t: float, node: NodeView, group: str, instance: str, addresses: Sequence[NodeAddress], /
    ) -> None:
        """A Node object appears (NotReady unless ``node.ready``; initial nodes arrive Ready at t=0).

        ``instance`` is the instance id (= providerID, even when the Node's own providerID is empty
        because of a ``missingProviderID`` fault).
        """
        ...

    def set_node_ready(self, t: float, node_name: str, ready: bool, /) -> None:
        """The Node's Ready condition changes (start-up, or a ``nodeNotReady`` fault and its end)."""
        ...

    def node_deleted(self, t: float, node_name: str, /) -> None:
        """The Node object is gone (instance terminated, or a ``deleteNode`` action); the cluster
        garbage-collects its pods."""
        ...
