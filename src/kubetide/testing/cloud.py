"""A recording ``CloudProvider`` for unit tests of the components that use the port (CA, Escalator).

Like CA's ``testprovider``: configured with a fluent builder, it keeps sizes and instances in memory,
changes them as a cooperative cloud would (at once, no delays), records every mutating call, and can be
told to fail a method or to not implement one::

    cloud = (
        RecordingCloud()
        .with_group("ng1", min_size=1, max_size=10, target=2, template=template)
        .with_node("ng1", node_a)
        .with_failure("increase_size", group="ng1")
    )
    ...
    assert cloud.calls_to("delete_nodes") == [Call("delete_nodes", "ng1", ("node-a",))]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubetide.cloud.instance import (
    CloudProviderError,
    Instance,
    InstanceState,
    InstanceStatus,
    NodeGroupAutoscalingOptions,
    NodeTemplate,
    NotImplementedByProvider,
)
from kubetide.cloud.provider import BulkNodeLookup, CloudProvider, NodeGroup, PricingModel
from kubetide.model.node import NodeView

__all__ = ["Call", "RecordingCloud", "RecordingNodeGroup"]


@dataclass(frozen=True, slots=True)
class Call:
    """One mutating call: the method, the group (None for provider-level calls) and its arguments
    (node names for deletions, the delta for size changes)."""

    method: str
    group: str | None
    args: tuple[object, ...] = ()


def _key(node: NodeView) -> str:
    return node.provider_id or node.name


@dataclass(eq=False)
class RecordingNodeGroup:
    cloud: RecordingCloud
    group_id: str
    min: int
    max: int
    target: int
    template: NodeTemplate | None = None
    options: NodeGroupAutoscalingOptions | None = None
    instances: dict[str, Instance] = field(default_factory=dict)  # by id (providerID or node name)

    def id(self) -> str:
        return self.group_id

    def min_size(self) -> int:
        return self.min

    def max_size(self) -> int:
        return self.max

    def target_size(self) -> int:
        self.cloud._check("target_size", self.group_id)
        return self.target

    def increase_size(self, delta: int) -> None:
        self.cloud._record("increase_size", self.group_id, delta)
        if delta <= 0:
            raise CloudProviderError(f"size increase must be positive, got {delta}")
        if self.target + delta > self.max:
            raise CloudProviderError(
                f"size increase too large - desired:{self.target + delta} max:{self.max}"
            )
        self.target += delta
        for hook in self.cloud.scale_up_hooks:
            hook(self.group_id, delta)

    def atomic_increase_size(self, delta: int) -> str | None:
        self.cloud._check("atomic_increase_size", self.group_id)
        self.increase_size(delta)
        return self.cloud.atomic_routes.get(self.group_id)

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._delete("delete_nodes", nodes, force=False)

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._delete("force_delete_nodes", nodes, force=True)

    def _delete(self, method: str, nodes: Sequence[NodeView], *, force: bool) -> None:
        self.cloud._record(method, self.group_id, *(n.name for n in nodes))
        for node in nodes:
            if _key(node) not in self.instances:
                raise CloudProviderError(f"node {node.name} is not in group {self.group_id}")
        if not force and self.target - len(nodes) < self.min:
            raise CloudProviderError("min size reached, nodes will not be deleted")
        for node in nodes:
            del self.instances[_key(node)]
            self.cloud.node_groups_by_key.pop(_key(node), None)
            for hook in self.cloud.scale_down_hooks:
                hook(self.group_id, node.name)
        self.target = max(self.min if force else 0, self.target - len(nodes))

    def decrease_target_size(self, delta: int) -> None:
        self.cloud._record("decrease_target_size", self.group_id, delta)
        if delta >= 0:
            raise CloudProviderError(f"size decrease must be negative, got {delta}")
        if self.target + delta < len(self.instances):
            raise CloudProviderError(
                f"attempt to delete existing nodes targetSize:{self.target} delta:{delta} "
                f"existingNodes: {len(self.instances)}"
            )
        self.target += delta

    def nodes(self) -> list[Instance]:
        self.cloud._check("nodes", self.group_id)
        return list(self.instances.values())

    def template_node_info(self) -> NodeTemplate:
        self.cloud._check("template_node_info", self.group_id)
        if self.template is None:
            raise NotImplementedByProvider(f"no template for group {self.group_id}")
        return self.template

    def exist(self) -> bool:
        return True

    def create(self) -> NodeGroup:
        raise NotImplementedByProvider("create")

    def delete(self) -> None:
        raise NotImplementedByProvider("delete")

    def autoprovisioned(self) -> bool:
        return False

    def get_options(self, defaults: NodeGroupAutoscalingOptions) -> NodeGroupAutoscalingOptions | None:
        self.cloud._check("get_options", self.group_id)
        return self.options

    def debug(self) -> str:
        return f"{self.group_id} (min: {self.min}, max: {self.max}, target: {self.target})"


class RecordingCloud:
    def __init__(self, name: str = "test") -> None:
        self._name = name
        self.groups: dict[str, RecordingNodeGroup] = {}
        self.node_groups_by_key: dict[str, str] = {}  # providerID (or node name) -> group id
        self.calls: list[Call] = []
        self.gpu_label_key = ""  # tests set it to give the fake cloud a GPU label
        self.failures: dict[tuple[str, str | None], Exception] = {}
        self.scale_up_hooks: list[Callable[[str, int], object]] = []
        self.scale_down_hooks: list[Callable[[str, str], object]] = []
        self.atomic_routes: dict[str, str] = {}
        self._pricing: PricingModel | None = None

    # --- builder

    def with_group(
        self,
        group_id: str,
        min_size: int,
        max_size: int,
        target: int = 0,
        *,
        template: NodeTemplate | None = None,
        options: NodeGroupAutoscalingOptions | None = None,
    ) -> RecordingCloud:
        self.groups[group_id] = RecordingNodeGroup(
            self, group_id, min_size, max_size, target, template, options
        )
        return self

    def with_node(
        self, group_id: str, node: NodeView, state: InstanceState = InstanceState.Running
    ) -> RecordingCloud:
        """A registered node of ``group_id``, listed as an instance with id = its providerID (or name)."""
        return self.with_instance(group_id, Instance(_key(node), InstanceStatus(state)))

    def with_instance(self, group_id: str, instance: Instance) -> RecordingCloud:
        """An instance (possibly unregistered, or with a creation error) of ``group_id``."""
        self.groups[group_id].instances[instance.id] = instance
        self.node_groups_by_key[instance.id] = group_id
        return self

    def with_failure(
        self, method: str, *, group: str | None = None, error: Exception | None = None
    ) -> RecordingCloud:
        """Make ``method`` raise ``error`` (default CloudProviderError), for one group or all of them.
        Pass a NotImplementedByProvider to make an optional method unimplemented."""
        self.failures[(method, group)] = error or CloudProviderError(f"{method} failed (injected)")
        return self

    def with_pricing(self, pricing: PricingModel) -> RecordingCloud:
        self._pricing = pricing
        return self

    def with_atomic_route(self, group_id: str, note: str) -> RecordingCloud:
        """``group_id``'s atomic increase returns ``note`` (how it was made all-or-nothing)."""
        self.atomic_routes[group_id] = note
        return self

    def on_scale_up(self, hook: Callable[[str, int], object]) -> RecordingCloud:
        self.scale_up_hooks.append(hook)
        return self

    def on_scale_down(self, hook: Callable[[str, str], object]) -> RecordingCloud:
        self.scale_down_hooks.append(hook)
        return self

    # --- inspection

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def _check(self, method: str, group: str | None) -> None:
        error = self.failures.get((method, group)) or self.failures.get((method, None))
        if error is not None:
            raise error

    def _record(self, method: str, group: str | None, *args: object) -> None:
        self.calls.append(Call(method, group, args))
        self._check(method, group)

    # --- CloudProvider

    def name(self) -> str:
        return self._name

    def node_groups(self) -> list[NodeGroup]:
        return list(self.groups.values())

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        self._check("node_group_for_node", None)
        group_id = self.node_groups_by_key.get(_key(node))
        return self.groups[group_id] if group_id is not None else None

    def has_instance(self, node: NodeView) -> bool:
        self._check("has_instance", None)
        return _key(node) in self.node_groups_by_key

    def gpu_label(self) -> str:
        return self.gpu_label_key

    def pricing(self) -> PricingModel:
        if self._pricing is None:
            raise NotImplementedByProvider("pricing")
        return self._pricing

    def refresh(self) -> None:
        self._record("refresh", None)

    def cleanup(self) -> None:
        self._record("cleanup", None)

    def bulk_lookup(self) -> BulkNodeLookup | None:
        return None  # node by node


def _conforms(cloud: RecordingCloud, group: RecordingNodeGroup) -> tuple[CloudProvider, NodeGroup]:
    return cloud, group  # mypy checks that both implement the port
