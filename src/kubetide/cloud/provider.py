"""The cloud-provider port: what Cluster Autoscaler (and Escalator) may ask of the cloud, and nothing more.

Cluster Autoscaler's ``CloudProvider`` / ``NodeGroup`` interfaces (CA spec §9) in Python naming. The core
depends on these protocols only; the simulator passes :class:`~kubetide.sim.cloud.simulated.SimulatedCloud`,
tests pass :class:`~kubetide.testing.cloud.RecordingCloud`, a live adapter would wrap a real cloud's API.

Error contract, for every method: :class:`CloudProviderError` means the call failed and changed nothing
the caller can rely on (CA logs it, backs the group off after a failed ``increase_size``, emits
``DeleteUnregisteredFailed`` etc.); :class:`NotImplementedByProvider` means an optional method is not
offered and the caller takes its documented fallback. Pure types; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubetide.cloud.instance import (
    CloudProviderError,
    ErrorClass,
    Instance,
    InstanceErrorInfo,
    InstanceState,
    InstanceStatus,
    NodeGroupAutoscalingOptions,
    NodeTemplate,
    NotImplementedByProvider,
)
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = [
    "BulkNodeLookup",
    "CloudProvider",
    "CloudProviderError",
    "ErrorClass",
    "Instance",
    "InstanceErrorInfo",
    "InstanceState",
    "InstanceStatus",
    "NodeGroup",
    "NodeGroupAutoscalingOptions",
    "NodeTemplate",
    "NotImplementedByProvider",
    "PricingModel",
    "StaticNodeGroup",
]


class StaticNodeGroup:
    """The part of :class:`NodeGroup` every group that exists outside the autoscaler shares (ASGs, kwok
    groups, simulated groups): it exists, is not autoprovisioned, and cannot be created or deleted.
    ``static_reason`` says why in the NotImplementedByProvider message."""

    static_reason = "node groups are not autoprovisioned"

    def exist(self) -> bool:
        return True

    def create(self) -> NodeGroup:
        raise NotImplementedByProvider(self.static_reason)

    def delete(self) -> None:
        raise NotImplementedByProvider(self.static_reason)

    def autoprovisioned(self) -> bool:
        return False


class PricingModel(Protocol):
    """Prices for the price expander (upstream ``PricingModel``); amounts in the cloud's currency."""

    def node_price(self, node: NodeView, start: float, end: float) -> float:
        """What running ``node`` costs from ``start`` to ``end`` (seconds). CloudProviderError if unknown."""
        ...

    def pod_price(self, pod: Pod, start: float, end: float) -> float:
        """The theoretical cost of ``pod``'s requests over the interval (used to rank expansion options)."""
        ...


class NodeGroup(Protocol):
    """A set of identical machines whose size the autoscaler controls (an ASG, a MIG, a simulated group)."""

    def id(self) -> str:
        """A unique, stable key: CA keys backoff, templates, priorities and events by it."""
        ...

    def min_size(self) -> int: ...

    def max_size(self) -> int: ...

    def target_size(self) -> int:
        """The desired size. It may differ from the registered nodes: it counts instances still booting,
        never-registered ones, and requests the cloud has accepted but not fulfilled yet."""
        ...

    def increase_size(self, delta: int) -> None:
        """Raise the target by ``delta > 0``; returns once the new target is visible in ``target_size()``.

        CloudProviderError when ``delta <= 0``, when the target would exceed ``max_size()``, or when the
        cloud rejects the call. The instances may still fail later: they are then listed by ``nodes()`` in
        state Creating with an :class:`InstanceErrorInfo`.
        """
        ...

    def atomic_increase_size(self, delta: int) -> str | None:
        """Like ``increase_size`` but all-or-nothing. NotImplementedByProvider: CA falls back.

        May return how the increase was made all-or-nothing (kubetide's: a ProvisioningRequest's
        condition says it), e.g. the aws provider's route; None says nothing more."""
        ...

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        """Delete these nodes' instances and lower the target by their number.

        Nodes are matched by ``spec.providerID`` (CA passes fake nodes for unregistered or failed
        instances, with the instance id as providerID). CloudProviderError, with nothing deleted, if a
        node is not in this group or the target would drop below ``min_size()``.
        """
        ...

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        """``delete_nodes`` without the min-size check. NotImplementedByProvider: CA uses delete_nodes."""
        ...

    def decrease_target_size(self, delta: int) -> None:
        """Lower the target by ``-delta`` (``delta < 0``) by dropping requests not yet fulfilled.

        Never deletes an existing instance: CloudProviderError if the new target would be below the
        number of instances the group has, or below ``min_size()``, or if ``delta >= 0``.
        """
        ...

    def nodes(self) -> list[Instance]:
        """Every instance of the group, registered or not, including failed creations and deletions in
        progress. Ids equal the providerID of the instances' Nodes. Callers never change the list; a
        provider may hand out the very same list again while the instances are unchanged (the cluster
        state then reuses what it derived from it), and never changes one it handed out."""
        ...

    def template_node_info(self) -> NodeTemplate:
        """What the cloud claims a new node of this group looks like (for scale-from-zero).

        It may differ from the real machines (CA corrects it from real nodes when it can).
        NotImplementedByProvider: CA skips the group when it has no real node to copy.
        """
        ...

    def exist(self) -> bool:
        """False for a group that autoprovisioning proposed but that was not created yet."""
        ...

    def create(self) -> NodeGroup:
        """Create an autoprovisioned group in the cloud. NotImplementedByProvider for static groups."""
        ...

    def delete(self) -> None:
        """Delete an autoprovisioned group of size 0. NotImplementedByProvider for static groups."""
        ...

    def autoprovisioned(self) -> bool: ...

    def get_options(self, defaults: NodeGroupAutoscalingOptions) -> NodeGroupAutoscalingOptions | None:
        """This group's overrides of ``defaults``; None means "use the defaults".
        NotImplementedByProvider means the same."""
        ...

    def debug(self) -> str:
        """A one-line dump for logs."""
        ...


class CloudProvider(Protocol):
    """The cloud as a whole: its node groups and how Nodes map to them."""

    def name(self) -> str: ...

    def node_groups(self) -> list[NodeGroup]:
        """The groups the autoscaler manages; the list may change after ``refresh()``."""
        ...

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        """The group of ``node`` (by providerID). None: the node is not autoscaled; CA never removes it
        but counts it in cluster totals and health. CloudProviderError if the lookup itself failed."""
        ...

    def has_instance(self, node: NodeView) -> bool:
        """Whether the node's cloud instance still exists (False: deleted in the cloud).

        CloudProviderError if it cannot tell (e.g. the node has no providerID); NotImplementedByProvider
        makes CA treat a node as deleted when it carries the ToBeDeleted taint.
        """
        ...

    def pricing(self) -> PricingModel:
        """Prices for the price expander. NotImplementedByProvider: that expander cannot be used."""
        ...

    def gpu_label(self) -> str:
        """CA's ``GPULabel``: the node label this cloud puts on GPU machines ("" if none). A node with
        it, or with GPUs allocatable, is a GPU node: its utilization is its GPUs' alone."""
        ...

    def refresh(self) -> None:
        """Called at the start of every autoscaler loop, before any other call; refreshes caches."""
        ...

    def cleanup(self) -> None:
        """Called once when the autoscaler stops."""
        ...

    def bulk_lookup(self) -> BulkNodeLookup | None:
        """An optional capability, declared: the provider's :class:`BulkNodeLookup` (often the provider
        itself), or None when it answers node by node. Declared, not discovered: a wrapper (the live
        guard) declares what it offers itself, so it can neither hide its provider's nor offer one
        that would skip its own methods."""
        ...


class BulkNodeLookup(Protocol):
    """Optional (:meth:`CloudProvider.bulk_lookup`), for a provider that can answer for many nodes at
    once: the loop asks every node's group and instance every loop, and one call per node is most of
    what those questions cost.

    Each answer is, node for node, what the per-node method gives. If any per-node call would raise,
    the bulk call raises (CloudProviderError or NotImplementedByProvider) and the caller asks node by
    node, so errors are handled exactly as without it.
    """

    def node_group_ids(self, nodes: Sequence[NodeView]) -> list[str | None]:
        """``node_group_for_node(n)``'s id (None where it gives None) for each of ``nodes``, in order."""
        ...

    def has_instances(self, nodes: Sequence[NodeView]) -> list[bool]:
        """``has_instance(n)`` for each of ``nodes``, in order."""
        ...
