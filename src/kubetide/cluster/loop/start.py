"""The start of a loop (CA spec §1 steps 2-5): the cloud refreshed, the world's nodes matched to their
instances and groups, each node's pods, as one :class:`~kubetide.cluster.loop.view.LoopView`, and the
notices of nodes without providerID (matched by address, or to nothing).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import repeat

from kubetide.cloud.instance import CloudProviderError, NotImplementedByProvider
from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.clusterstate.matching import NodeMatching, match_nodes_without_provider_id
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.gpu import with_unready_gpus_unready
from kubetide.cluster.loop.plan import Notices
from kubetide.cluster.loop.timing import FunctionLabel, FunctionTimer
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.loop.world import CAEvent, World
from kubetide.cluster.reasons import KubetideEventReason
from kubetide.cluster.taintconfig import TaintConfig, with_startup_tainted_unready
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["LoopStart", "start_loop"]

_provider_id = operator.attrgetter("provider_id")
_NAME = operator.attrgetter("name")


@dataclass(frozen=True, slots=True)
class LoopStart:
    """The loop's view, or why the loop cannot run (``error``); ``notices``: nodes without providerID."""

    view: LoopView | None
    notices: Notices | None = None
    error: str | None = None


def start_loop(
    cloud: CloudProvider, world: World, now: float, taints: TaintConfig, timer: FunctionTimer
) -> LoopStart:
    """Refresh the cloud and read the loop's view of ``world`` (its groups from the cloud)."""
    refreshed = timer.start()
    try:
        cloud.refresh()
        groups = {g.id(): g for g in cloud.node_groups()}
    except CloudProviderError as exc:
        return LoopStart(None, error=f"failed to refresh cloud provider: {exc}")
    finally:
        timer.observe(FunctionLabel.CLOUD_PROVIDER_REFRESH, refreshed)
    if all(map(_provider_id, world.nodes)):
        matching = NodeMatching(tuple(world.nodes))  # the usual case: no cloud call
    else:
        try:
            instances = {gid: g.nodes() for gid, g in groups.items()}
        except CloudProviderError as exc:
            return LoopStart(None, error=f"failed to list the cloud's instances: {exc}")
        matching = match_nodes_without_provider_id(world.nodes, instances)
    # Upstream's FilterOutNodesWithStartupTaints: a Ready node still carrying a startup taint is not ready.
    nodes = with_startup_tainted_unready(matching.nodes, taints)
    # And FilterOutNodesWithUnreadyResources: a GPU node whose GPUs are not allocatable yet.
    gpu_label = cloud.gpu_label()
    nodes = with_unready_gpus_unready(nodes, gpu_label)
    names = list(map(_NAME, nodes))  # the world's nodes' names, in order
    group_of = _groups_of(cloud, nodes, names)
    lookups_failed = False
    if group_of is None:
        group_of = {}
        for n in nodes:
            try:
                g = cloud.node_group_for_node(n)
            except CloudProviderError:
                g, lookups_failed = None, True
            group_of[n.name] = g.id() if g is not None else None
    pods_by_node, world = _pods_by_node(world, names)
    view = LoopView(
        now,
        world,
        tuple(nodes),
        group_of,
        groups,
        pods_by_node,
        unidentified=tuple(n.name for n in matching.unidentified if is_node_ready(n)),
        gpu_label=gpu_label,
        groups_known=not lookups_failed,
    )
    events = _without_provider_id(matching)
    return LoopStart(view, Notices("nodes without providerID", events) if events else None)


def _pods_by_node(world: World, names: list[str]) -> tuple[dict[str, Sequence[Pod]], World]:
    """Each node's pods; and the world, given the pods bound to no node when it had to walk every pod
    for the buckets (the pending pods are read from them: no second walk)."""
    if world.pods_by_node is not None:  # kept by the source: a loop need not walk 30,000 pods
        index = world.pods_by_node
        return dict(zip(names, map(index.get, names, repeat(())), strict=True)), world
    buckets: dict[str, list[Pod]] = {n.name: [] for n in world.nodes}
    unbound: list[Pod] = []
    bucket_of = buckets.get
    for p in world.pods:
        bucket = bucket_of(p.node_name)
        if bucket is not None:
            if p.phase not in ("Succeeded", "Failed"):
                bucket.append(p)
        elif not p.node_name:
            unbound.append(p)
    if world.unbound_pods is None:
        world = replace(world, unbound_pods=unbound)
    return dict(buckets), world


def _groups_of(
    cloud: CloudProvider, nodes: Sequence[NodeView], names: list[str]
) -> dict[str, str | None] | None:
    """Every node's group id from a provider that answers in bulk; None when it does not, or when
    some node's lookup fails (the caller then asks node by node, noting which failed)."""
    bulk = cloud.bulk_lookup()
    if bulk is None:
        return None
    try:
        ids = bulk.node_group_ids(nodes)
    except (CloudProviderError, NotImplementedByProvider):
        return None
    return dict(zip(names, ids, strict=True))


def _without_provider_id(matching: NodeMatching) -> tuple[CAEvent, ...]:
    events = [
        CAEvent(
            "Warning",
            str(KubetideEventReason.NODE_WITHOUT_PROVIDER_ID),
            f"Node/{m.node}",
            f"node {m.node} has no spec.providerID; matched to instance {m.instance} of node group "
            f"{m.group} by its address {m.address}",
            {"node": m.node, "group": m.group, "instance": m.instance},
        )
        for m in matching.matched
    ]
    events += [
        CAEvent(
            "Warning",
            str(KubetideEventReason.NODE_WITHOUT_PROVIDER_ID),
            f"Node/{n.name}",
            f"node {n.name} has no spec.providerID and matches no instance of any node group; "
            "while it is Ready, no instance is removed as unregistered",
            {"node": n.name},
        )
        for n in matching.unidentified
    ]
    return tuple(events)
