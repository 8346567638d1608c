"""``--dry-run`` for the cloud: every group write is logged and counted, and none is made.

The API writes have their own dry run (:class:`~kubetide.kube.actuation.KubeClusterPort`); this wraps
the cloud provider the same way, so a dry-run autoscaler decides exactly as a real one (the loop sees
each write succeed) while no group changes size. Each would-be write is one log line and one count in
``kubetide_dry_run_actions_total{component,action}``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, cast

from kubetide.cloud.provider import CloudProvider, NodeGroup
from kubetide.kube.metrics import DRY_RUN_ACTIONS
from kubetide.model.node import NodeView

__all__ = ["DryRunCloud"]

log = logging.getLogger("kubetide.dry-run")


class _DryRunGroup:
    def __init__(self, inner: NodeGroup, component: str) -> None:
        self._inner = inner
        self._component = component

    def __getattr__(self, name: str) -> Any:  # the read-only methods
        return getattr(self._inner, name)

    def _would(self, action: str, what: str) -> None:
        DRY_RUN_ACTIONS.labels(component=self._component, action=action).inc()
        log.info("dry run: would %s", what, extra={"action": action, "node_group": self._inner.id()})

    def increase_size(self, delta: int) -> None:
        self._would("increase_size", f"increase node group {self._inner.id()} by {delta}")

    def atomic_increase_size(self, delta: int) -> None:
        self._would("increase_size", f"increase node group {self._inner.id()} by {delta} (atomically)")

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        names = ", ".join(n.name for n in nodes)
        self._would("delete_nodes", f"delete nodes {names} of node group {self._inner.id()}")

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self.delete_nodes(nodes)

    def decrease_target_size(self, delta: int) -> None:
        self._would(
            "decrease_target_size", f"decrease the target of node group {self._inner.id()} by {-delta}"
        )

    def create(self) -> NodeGroup:
        self._would("create_node_group", f"create node group {self._inner.id()}")
        return cast(NodeGroup, self)

    def delete(self) -> None:
        self._would("delete_node_group", f"delete node group {self._inner.id()}")


class DryRunCloud:
    def __init__(self, inner: CloudProvider, component: str) -> None:
        self._inner = inner
        self._component = component

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def node_groups(self) -> list[NodeGroup]:
        return [cast(NodeGroup, _DryRunGroup(g, self._component)) for g in self._inner.node_groups()]

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        group = self._inner.node_group_for_node(node)
        return None if group is None else cast(NodeGroup, _DryRunGroup(group, self._component))
