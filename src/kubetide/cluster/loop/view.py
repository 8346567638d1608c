"""What one Cluster Autoscaler loop reads, fixed when it starts: :class:`LoopView`.

Every stage that decides takes this read-only view (and the autoscaler's memory it is given) and
returns a value; none writes to it. When an action changes what the loop sees (a stale taint removed at
start), the autoscaler passes the next stages a new view (:meth:`LoopView.with_nodes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.loop.world import World
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["LoopView"]


@dataclass(frozen=True, slots=True)
class LoopView:
    """The loop's time, world and nodes (the world's, with startup-tainted and GPU-less nodes unready),
    each node's group (``group_of``; None: not autoscaled), the groups, and each node's pods."""

    now: float
    world: World
    nodes: tuple[NodeView, ...]
    group_of: Mapping[str, str | None]
    groups: Mapping[str, NodeGroup]
    pods_by_node: Mapping[str, Sequence[Pod]]  # each world node's pods, but Succeeded and Failed ones
    # Ready nodes without providerID that match no instance: no instance is removed as unregistered.
    unidentified: tuple[str, ...] = ()
    gpu_label: str = ""  # the cloud's GPULabel: which nodes are GPU nodes (cluster.gpu)
    groups_known: bool = True  # every node's group lookup succeeded (``group_of`` is the cloud's answer)

    def with_nodes(self, nodes: Sequence[NodeView]) -> LoopView:
        """The same view with these node objects (a node's taints changed by an action of this loop)."""
        return replace(self, nodes=tuple(nodes))
