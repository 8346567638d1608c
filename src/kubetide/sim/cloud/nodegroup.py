"""The simulated cloud's ``NodeGroup``: the API checks in front of a :class:`~kubetide.sim.cloud.group.SimGroup`.

Behaves like an AWS Auto Scaling group seen through Cluster Autoscaler's provider: the target can not
leave ``[min, max]``, ``delete_nodes`` is all-or-nothing, ``decrease_target_size`` only drops what
never became a machine (unfulfilled requests, then failed creations), and an ``apiError`` fault makes
the mutating calls fail. ``caller`` names who uses this handle; it is the ``reason`` of the
``InstanceTerminated`` events its deletions cause.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubetide.cloud.instance import (
    CloudProviderError,
    Instance,
    InstanceState,
    NodeGroupAutoscalingOptions,
    NodeTemplate,
)
from kubetide.cloud.provider import StaticNodeGroup
from kubetide.model.node import NodeView
from kubetide.sim.cloud.group import SimGroup
from kubetide.sim.cloud.instances import SimInstance, parse_provider_id
from kubetide.sim.cloud.nodes import build_template

__all__ = ["SimNodeGroup"]


class SimNodeGroup(StaticNodeGroup):
    static_reason = "the simulated cloud has no autoprovisioning"

    def __init__(self, group: SimGroup, clock: Callable[[], float], caller: str) -> None:
        self._group = group
        self._clock = clock  # the engine's current time: the provider API carries no `now`
        self._caller = caller

    def id(self) -> str:
        return self._group.spec.name

    def min_size(self) -> int:
        return self._group.spec.min_size

    def max_size(self) -> int:
        return self._group.spec.max_size

    def target_size(self) -> int:
        return self._group.target

    def increase_size(self, delta: int) -> None:
        now = self._clock()
        self._api_check("IncreaseSize", now)
        if delta <= 0:
            raise CloudProviderError(f"size increase must be positive, got {delta}")
        wanted = self._group.target + delta
        if wanted > self.max_size():
            raise CloudProviderError(f"size increase too large - desired:{wanted} max:{self.max_size()}")
        self._group.target = wanted
        self._group.reconcile(now)

    def atomic_increase_size(self, delta: int) -> None:
        # Already all-or-nothing: either the whole delta is accepted or the call fails.
        self.increase_size(delta)

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._delete(nodes, force=False)

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._delete(nodes, force=True)

    def _delete(self, nodes: Sequence[NodeView], *, force: bool) -> None:
        now = self._clock()
        self._api_check("DeleteNodes", now)
        chosen: dict[str, SimInstance] = {}
        for node in nodes:
            inst = self._instance_of(node)
            if inst.state is not InstanceState.Deleting:  # deleting twice is a no-op, as on AWS
                chosen[inst.short_id] = inst
        group = self._group
        remaining = group.target - len(chosen)
        if remaining < self.min_size():
            if not force:
                raise CloudProviderError(
                    f"min size reached, nodes will not be deleted (group {self.id()}: target "
                    f"{group.target}, deleting {len(chosen)}, min {self.min_size()})"
                )
            # The group keeps its minimum and replaces the machines, as an ASG does.
            remaining = self.min_size()
        group.target = remaining
        group.delete(chosen.values(), now, self._caller)
        group.reconcile(now)

    def _instance_of(self, node: NodeView) -> SimInstance:
        short_id = parse_provider_id(node.provider_id)
        inst = self._group.live.get(short_id) if short_id is not None else None
        if inst is None:
            raise CloudProviderError(
                f"node {node.name} (providerID {node.provider_id!r}) is not an instance of group {self.id()}"
            )
        return inst

    def decrease_target_size(self, delta: int) -> None:
        now = self._clock()
        self._api_check("DecreaseTargetSize", now)
        group = self._group
        if delta >= 0:
            raise CloudProviderError(f"size decrease must be negative, got {delta}")
        wanted = group.target + delta
        if wanted < self.min_size():
            raise CloudProviderError(f"size decrease too large - desired:{wanted} min:{self.min_size()}")
        existing = len(group.not_deleting()) - len(group.failed())
        if wanted < existing:
            raise CloudProviderError(
                f"attempt to delete existing nodes targetSize:{group.target} delta:{delta} "
                f"existingNodes: {existing}"
            )
        group.target = wanted
        group.drop_failed(-group.unfulfilled(), now, self._caller)

    def nodes(self) -> list[Instance]:
        return self._group.instances()

    def template_node_info(self) -> NodeTemplate:
        return build_template(self._group.spec)

    def get_options(self, defaults: NodeGroupAutoscalingOptions) -> NodeGroupAutoscalingOptions | None:
        return None  # scenarios set no per-group options: the defaults apply

    def debug(self) -> str:
        g = self._group
        return (
            f"{self.id()} (min: {self.min_size()}, max: {self.max_size()}, target: {g.target}, "
            f"instances: {len(g.live)}, unfulfilled: {g.unfulfilled()})"
        )

    def _api_check(self, call: str, now: float) -> None:
        if self._group.faults.api_error(call, now):
            raise CloudProviderError(f"{call} on group {self.id()} failed: simulated cloud API error")
