"""Carrying out one :class:`EscalatorDecision`: API and cloud calls in upstream's order, node by node.

The order is upstream's ``scaleNodeGroup`` (``pkg/controller/controller.go``, ``scale_up.go``,
``scale_down.go``, ``pkg/k8s/taint.go``): unhealthy nodes are tainted first, then empty force-tainted
nodes are deleted, then a scale-up untaints the newest tainted nodes *before* it raises the cloud
group (untainted nodes are instant capacity), then a scale-down deletes the reaped nodes before it
taints more. A deletion terminates the instance through the cloud's ``delete_nodes`` (which lowers
the target) and only then deletes the Node object, as upstream's ``TryDeleteNodes``; if the cloud
refuses, the Node stays.

Unlike upstream, one failure never stops the rest: each node is its own call (upstream passes all
reaped nodes to one ``DeleteNodes``, where one foreign node fails the batch), and every error is
recorded as a failed :class:`Action` and a Warning event. Nothing is deleted on a guess: a node is
deleted only if the listed node belongs to the group and carries the force taint or a removal taint
with a readable time, whatever the decision says. The removal taint is added only to nodes that do
not carry it yet (upstream re-reads the node and leaves an existing taint, and its time, alone).
A failed untaint is reported and not made up for in the same tick (upstream tries the next tainted
node and asks the cloud for one more); the next tick decides again from what the cluster shows.

In dry mode nothing is called and no event is written: the would-be actions are reported, read from
the decision's dry-mode taint tracker and scale lock. No clock, no I/O but the two ports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import NodeGroup
from kubetide.escalator.decision import EscalatorDecision
from kubetide.escalator.membership import is_daemonset_pod
from kubetide.escalator.reasons import EventReason, Message
from kubetide.escalator.state import GroupMemory
from kubetide.escalator.taints import TAINT_KEY, has_force_taint, has_taint, taint_time
from kubetide.model.api import ApiError, ClusterPort
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint

__all__ = ["Action", "ActionKind", "Execution", "GroupView", "execute_decision"]


class ActionKind(StrEnum):
    TAINT = "taint"
    UNTAINT = "untaint"
    INCREASE = "increase"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class Action:
    """One call made (or, in dry mode, one that would have been made)."""

    kind: ActionKind
    target: str  # the node; the node group's name for an increase
    count: int = 1  # nodes: 1, or the cloud increase
    dry_run: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class GroupView:
    """What the executor needs besides the decision: the group's listed nodes, its pods by node, the
    nodes unhealthy at this run (tainted first), and the memory the decision started from."""

    nodes: Mapping[str, NodeView]
    pods_by_node: Mapping[str, Sequence[Pod]]
    unhealthy: frozenset[str] = frozenset()
    before: GroupMemory = field(default_factory=GroupMemory)


@dataclass(frozen=True, slots=True)
class Execution:
    group: str
    actions: tuple[Action, ...] = ()
    increase_failed: bool = False
    pods_evicted: int = 0  # group pods (not DaemonSet) still on the nodes deleted

    @property
    def errors(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if not a.ok)

    def done(self, kind: ActionKind) -> tuple[str, ...]:
        """Targets of the calls of ``kind`` that succeeded (none in dry mode)."""
        return tuple(a.target for a in self.actions if a.kind is kind and a.ok and not a.dry_run)


def _deletable(node: NodeView | None) -> bool:
    # Deleting is the one action that cannot be undone: insist on seeing the taint ourselves.
    return node is not None and (has_force_taint(node) or taint_time(node) is not None)


class _Run:
    def __init__(self, decision: EscalatorDecision, view: GroupView, cluster: ClusterPort) -> None:
        self.d, self.view, self.cluster = decision, view, cluster
        self.actions: list[Action] = []
        self.increase_failed = False
        self.evicted = 0

    def _event(self, warning: bool, reason: EventReason, obj: str, message: str) -> None:
        self.cluster.emit_event("Warning" if warning else "Normal", reason, obj, message)

    def _node_call(
        self,
        kind: ActionKind,
        name: str,
        call: Callable[[str], None],
        done: tuple[EventReason, Callable[[str], str]],
        failed: tuple[EventReason, Callable[[str, str], str]],
    ) -> bool:
        """One API call on one node, recorded with its event; False when it failed."""
        try:
            call(name)
        except ApiError as exc:
            message = failed[1](name, str(exc))
            self.actions.append(Action(kind, name, error=message))
            self._event(True, failed[0], f"Node/{name}", message)
            return False
        self.actions.append(Action(kind, name))
        self._event(False, done[0], f"Node/{name}", done[1](name))
        return True

    def taint(self, names: Sequence[str]) -> None:
        taint = Taint(TAINT_KEY, self.d.taint_value, self.d.taint_effect)
        add = self.cluster.add_node_taint
        for name in names:
            node = self.view.nodes.get(name)
            if node is not None and has_taint(node):
                continue  # already tainted: its time is kept, as upstream's AddToBeRemovedTaint
            self._node_call(
                ActionKind.TAINT,
                name,
                lambda n: add(n, taint),
                (EventReason.TAINT, Message.tainting),
                (EventReason.TAINT_FAILED, Message.taint_failed),
            )

    def untaint(self, names: Sequence[str]) -> None:
        remove = self.cluster.remove_node_taint
        for name in names:
            self._node_call(
                ActionKind.UNTAINT,
                name,
                lambda n: remove(n, TAINT_KEY),
                (EventReason.UNTAINT, Message.untainting),
                (EventReason.UNTAINT_FAILED, Message.untaint_failed),
            )

    def increase(self, cloud: NodeGroup | None) -> None:
        count, obj = self.d.increase, f"NodeGroup/{self.d.group}"
        if count <= 0:
            return
        try:
            if cloud is None:
                raise CloudProviderError(f"cloud provider node group does not exist: {self.d.group}")
            cloud.increase_size(count)
        except CloudProviderError as exc:
            self.increase_failed = True
            self.actions.append(Action(ActionKind.INCREASE, self.d.group, count, error=str(exc)))
            self._event(True, EventReason.SCALE_UP_FAILED, obj, Message.increase_failed(str(exc)))
            return
        self.actions.append(Action(ActionKind.INCREASE, self.d.group, count))
        self._event(False, EventReason.SCALE_UP, obj, Message.increasing(count))

    def delete(self, names: Sequence[str], cloud: NodeGroup | None) -> None:
        for name in names:
            node = self.view.nodes.get(name)
            if node is None or not _deletable(node):
                error = f"node {name} is not a tainted node of node group {self.d.group}: not deleted"
                self.actions.append(Action(ActionKind.DELETE, name, error=error))
                self._event(True, EventReason.DELETE_FAILED, f"Node/{name}", error)
                continue
            try:
                if cloud is None:
                    raise CloudProviderError(f"cloud provider node group does not exist: {self.d.group}")
                cloud.delete_nodes([node])
            except CloudProviderError as exc:
                message = Message.terminate_failed(name, node.provider_id, str(exc))
                self.actions.append(Action(ActionKind.DELETE, name, error=message))
                self._event(True, EventReason.DELETE_FAILED, f"Node/{name}", message)
                continue
            deleted = self._node_call(
                ActionKind.DELETE,
                name,
                self.cluster.delete_node,
                (EventReason.DELETE, partial(Message.deleting, provider_id=node.provider_id)),
                (EventReason.DELETE_FAILED, Message.delete_node_failed),
            )
            if deleted:
                pods = self.view.pods_by_node.get(name, ())
                self.evicted += sum(1 for p in pods if not is_daemonset_pod(p))

    def dry(self) -> None:
        d, before = self.d, self.view.before.taint_tracker
        after = d.memory.taint_tracker
        for name in before:
            if name not in after:
                self.actions.append(Action(ActionKind.UNTAINT, name, dry_run=True))
        if d.memory_if_increase_fails is not None:  # the lock was taken for the nodes it would add
            count = d.memory.lock.requested_nodes
            self.actions.append(Action(ActionKind.INCREASE, d.group, count, dry_run=True))
        for name in after:
            if name not in before:
                self.actions.append(Action(ActionKind.TAINT, name, dry_run=True))


def execute_decision(
    decision: EscalatorDecision, view: GroupView, cluster: ClusterPort, cloud: NodeGroup | None
) -> Execution:
    """Carry out ``decision`` (see the module docstring for the order); never raises ApiError or
    CloudProviderError: each failure is an :class:`Action` with its error."""
    run = _Run(decision, view, cluster)
    if decision.dry_mode:
        run.dry()
        return Execution(decision.group, tuple(run.actions))
    force = {n.name for n in decision.buckets.force_tainted}
    run.taint([n for n in decision.taint if n in view.unhealthy])
    run.delete([n for n in decision.delete if n in force], cloud)
    run.untaint(decision.untaint)
    run.increase(cloud)
    run.delete([n for n in decision.delete if n not in force], cloud)
    run.taint([n for n in decision.taint if n not in view.unhealthy])
    return Execution(decision.group, tuple(run.actions), run.increase_failed, run.evicted)
