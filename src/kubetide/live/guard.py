"""Writes only while leading: a ClusterPort that refuses every write once the Lease is lost.

Leader election decides who may act, but a loop that is half-way through its actions when the Lease
is lost would go on writing beside the new leader. Wrapping the port makes "a replica that loses the
lease stops acting at once" hold for every single write: each is checked against the elector's latest
view and refused with an :class:`~kubetide.model.api.ApiError` (a ``CloudProviderError`` for the
cloud), which the loop reports and moves on from. Reads and Events pass: they change nothing a user owns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from kubetide.cloud.provider import CloudProvider, CloudProviderError, NodeGroup
from kubetide.model.api import ApiError, ClusterPort, EvictionOutcome
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint

__all__ = ["LeaderGuardedCloud", "LeaderGuardedPort", "LeadershipLost"]


class LeadershipLost(ApiError):
    """This replica no longer holds the Lease: the write was not made."""


class LeaderGuardedPort:
    def __init__(self, inner: ClusterPort, is_leader: Callable[[], bool]) -> None:
        self._inner = inner
        self._is_leader = is_leader

    def _check(self) -> None:
        if not self._is_leader():
            raise LeadershipLost("not the leader any more: write refused")

    def add_node_taint(self, node: str, taint: Taint) -> None:
        self._check()
        self._inner.add_node_taint(node, taint)

    def remove_node_taint(self, node: str, key: str) -> None:
        self._check()
        self._inner.remove_node_taint(node, key)

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        self._check()
        self._inner.set_node_unschedulable(node, unschedulable)

    def annotate_node(self, node: str, annotations: Mapping[str, str | None]) -> None:
        self._check()
        self._inner.annotate_node(node, annotations)

    def delete_node(self, node: str) -> None:
        self._check()
        self._inner.delete_node(node)

    def evict(self, pod: Pod, grace_period_s: int | None = None) -> EvictionOutcome:
        self._check()
        return self._inner.evict(pod, grace_period_s)

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self._inner.emit_event(type_, reason, obj, message)

    def write_config_map(self, namespace: str, name: str, data: Mapping[str, str]) -> None:
        """The ConfigMaps the autoscaler owns (its state, its learned templates): a write like the others.
        Without this the driver, which writes them only through a port that can, wrote neither live."""
        self._check()
        write = getattr(self._inner, "write_config_map", None)
        if write is None:
            raise ApiError("this port writes no ConfigMaps")
        write(namespace, name, data)


class _GuardedGroup:
    """A NodeGroup whose writes are checked like the port's; reads pass through."""

    def __init__(self, inner: NodeGroup, check: Callable[[], None]) -> None:
        self._inner = inner
        self._check = check

    def __getattr__(self, name: str) -> Any:  # the read-only methods
        return getattr(self._inner, name)

    def increase_size(self, delta: int) -> None:
        self._check()
        self._inner.increase_size(delta)

    def atomic_increase_size(self, delta: int) -> None:
        self._check()
        self._inner.atomic_increase_size(delta)

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._check()
        self._inner.delete_nodes(nodes)

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._check()
        self._inner.force_delete_nodes(nodes)

    def decrease_target_size(self, delta: int) -> None:
        self._check()
        self._inner.decrease_target_size(delta)

    def create(self) -> NodeGroup:
        self._check()
        return self._inner.create()

    def delete(self) -> None:
        self._check()
        self._inner.delete()


class LeaderGuardedCloud:
    """The cloud provider with every group's writes refused once the Lease is lost."""

    def __init__(self, inner: CloudProvider, is_leader: Callable[[], bool]) -> None:
        self._inner = inner
        self._is_leader = is_leader

    def _check(self) -> None:
        if not self._is_leader():
            raise CloudProviderError("not the leader any more: cloud write refused")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _wrap(self, group: NodeGroup) -> NodeGroup:
        return cast(NodeGroup, _GuardedGroup(group, self._check))

    def node_groups(self) -> list[NodeGroup]:
        return [self._wrap(g) for g in self._inner.node_groups()]

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        group = self._inner.node_group_for_node(node)
        return None if group is None else self._wrap(group)
