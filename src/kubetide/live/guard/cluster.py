"""The cluster's writes through the gate: the ClusterPort (with the driver's own ConfigMaps) and the
status ConfigMap.

The leader check is made at each write against the elector's latest view, so "a replica that loses
the Lease stops acting at once" holds for every single write of a loop already running.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from kubetide.cluster.capacity.objects import CapacityPort, CapacityWrite
from kubetide.live.guard.gate import WriteGate
from kubetide.model.api import ApiError, ClusterPort, ConfigMapWriter, EvictionOutcome, PortCapabilities
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint

__all__ = ["GuardedClusterPort", "GuardedStatusConfigMap", "LeadershipLost", "LiveClusterPort"]


class LeadershipLost(ApiError):
    """This replica no longer holds the Lease: the write was not made."""


def _lost() -> LeadershipLost:
    return LeadershipLost("not the leader any more: write refused")


class LiveClusterPort(ClusterPort, ConfigMapWriter, Protocol):
    """What a live autoscaler writes to the API server: the ClusterPort and its own ConfigMaps."""


class GuardedClusterPort:
    """:class:`LiveClusterPort` with every write through the gate; Events pass."""

    def __init__(self, inner: LiveClusterPort, gate: WriteGate) -> None:
        self._inner = inner
        self._gate = gate

    def _admit(self, action: str, what: str) -> bool:
        return self._gate.admit(action, what, _lost)

    def add_node_taint(self, node: str, taint: Taint) -> None:
        if self._admit("add-taint", f"add taint {taint.key}={taint.value}:{taint.effect} to node {node}"):
            self._inner.add_node_taint(node, taint)

    def remove_node_taint(self, node: str, key: str) -> None:
        if self._admit("remove-taint", f"remove taint {key} from node {node}"):
            self._inner.remove_node_taint(node, key)

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        action = "cordon" if unschedulable else "uncordon"
        if self._admit(action, f"{action} node {node}"):
            self._inner.set_node_unschedulable(node, unschedulable)

    def annotate_node(self, node: str, annotations: Mapping[str, str | None]) -> None:
        if self._admit("annotate-node", f"annotate node {node}: {dict(annotations)}"):
            self._inner.annotate_node(node, annotations)

    def delete_node(self, node: str) -> None:
        if self._admit("delete-node", f"delete node {node}"):
            self._inner.delete_node(node)

    def evict(self, pod: Pod, grace_period_s: int | None = None) -> EvictionOutcome:
        if self._admit("evict", f"evict pod {pod.key}"):
            return self._inner.evict(pod, grace_period_s)
        # Nothing is evicted: as if the pod were gone at once, so the dry run goes on to show the node
        # deletion the drain would end in, instead of waiting for a pod that never goes.
        return EvictionOutcome.GONE

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self._inner.emit_event(type_, reason, obj, message)

    def write_capacity(self, write: CapacityWrite) -> None:
        """A capacity API write (``CapacityPort``), when the inner port takes them."""
        if self._admit("capacity", f"{write.action} {write.object}"):
            inner = self._inner
            if not isinstance(inner, CapacityPort):
                raise ApiError("the cluster port takes no capacity API writes")
            inner.write_capacity(write)

    def capabilities(self) -> PortCapabilities:
        """What the inner port declares, each write through this guard: its ConfigMaps through
        :meth:`write_config_map`; events (with their data) pass, as :meth:`emit_event`."""
        inner = self._inner.capabilities()
        return PortCapabilities(
            config_maps=self if inner.config_maps is not None else None, event_data=inner.event_data
        )

    def write_config_map(self, namespace: str, name: str, data: Mapping[str, str]) -> None:
        """The ConfigMaps the autoscaler owns (its state, its learned templates). Not written in a dry
        run: a dry run's scale-ups never happened, so its clocks and backoffs must not reach a real
        autoscaler that reads them at start."""
        if self._admit("write", f"write ConfigMap {namespace}/{name}"):
            self._inner.write_config_map(namespace, name, data)


class StatusWriter(Protocol):
    def write(self, status_yaml: str, last_updated: str) -> None: ...


class GuardedStatusConfigMap:
    """The status ConfigMap, written only while leading. A dry run writes it too: it is the
    autoscaler's report of what it decided, like its Events, and nothing a user owns."""

    def __init__(self, inner: StatusWriter, gate: WriteGate) -> None:
        self._inner = inner
        self._gate = gate

    def write(self, status_yaml: str, last_updated: str) -> None:
        self._gate.check_leading(_lost)
        self._inner.write(status_yaml, last_updated)
