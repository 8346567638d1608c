"""``--dry-run`` for the cloud: every group write is logged and counted, and none is made.

The API writes have their own dry run (:class:`~kubetide.live.actuation.KubeClusterPort`); this wraps
the cloud provider the same way, so a dry-run autoscaler decides exactly as a real one (the loop sees
each write succeed) while no group changes size. Each would-be write is one log line and one count in
``kubetide_dry_run_actions_total{component,action}``.

The Events of a dry run are still written (they are how users read its decisions), but an action's text
says what *would* have been done: the loop wrote "size set to 3" as if it had happened
(:func:`dry_run_message`, :class:`DryRunEventRecorder`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, cast

from kubetide.cloud.provider import CloudProvider, NodeGroup
from kubetide.kube.events import EventRecorder
from kubetide.kube.metrics import DRY_RUN_ACTIONS
from kubetide.model.node import NodeView

__all__ = ["DryRunCloud", "DryRunEventRecorder", "dry_run_message"]

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


# CA's action texts, as the loop words them once done, and how a dry run words them.
_WOULD: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(r"^Scale-up: (?:setting group (\S+) size to|group (\S+) size set to) (.*)$"),
        lambda m: f"Scale-up (dry run): would set group {m[1] or m[2]} size to {m[3]}",
    ),
    (
        re.compile(r"^pod triggered scale-up: (.*)$"),
        lambda m: f"pod would trigger scale-up (dry run): {m[1]}",
    ),
    (re.compile(r"^Scale-down: removing (.*)$"), lambda m: f"Scale-down (dry run): would remove {m[1]}"),
    (
        re.compile(r"^marked the node as (.*)$"),
        lambda m: f"dry run: would mark the node as {m[1]} (nothing was changed)",
    ),
    (re.compile(r"^deleting pod (.*)$"), lambda m: f"dry run: would delete pod {m[1]}"),
    (re.compile(r"^nodes? removed (.*)$"), lambda m: f"dry run: node would be removed {m[1]}"),
    (re.compile(r"^Removed (.*)$"), lambda m: f"dry run: would remove {m[1]}"),
    (re.compile(r"^Decreased (.*)$"), lambda m: f"dry run: would decrease {m[1]}"),
    (re.compile(r"^New size: (\d+); (.*)$"), lambda m: f"dry run: would set new size {m[1]}; {m[2]}"),
)
# Events that report an action taken (CA's reasons and kubetide's own).
_ACTIONS = frozenset(
    {
        "ScaledUpGroup",
        "TriggeredScaleUp",
        "ScaleDown",
        "ScaleDownEmpty",
        "DeleteUnregistered",
        "DeleteCreatedWithError",
        "FixNodeGroupSize",
        "SuccessfulRescale",  # the HPA's
    }
)


def dry_run_message(reason: str, message: str) -> str:
    """An action Event's text as a dry run must say it: "would ..."; other Events unchanged."""
    if reason not in _ACTIONS:
        return message
    for pattern, word in _WOULD:
        match = pattern.match(message)
        if match is not None:
            return word(match)
    return f"dry run, nothing was changed: {message}"


class DryRunEventRecorder(EventRecorder):
    """The Events of a dry-run component, action texts in the conditional."""

    def emit(self, type_: str, reason: str, obj: str, message: str) -> None:
        super().emit(type_, reason, obj, dry_run_message(reason, message))
