"""Scale-down actuation (CA spec §7.8) with its state kept on the nodes, so a restart resumes it.

A node CA started deleting carries ``ToBeDeletedByClusterAutoscaler=<unix seconds>:NoSchedule``.
Every loop, :func:`continue_deletions` looks at every such node that is still within the deletion
window: it evicts the pods that must go (the Eviction API honours PDBs; a refused eviction is retried
next loop until ``--max-pod-eviction-time``), and once nothing is left to move it calls
``DeleteNodes``. A node whose instance is already Deleting in the cloud is left alone, so nothing is
asked twice. Because all of this is read from the taint and the cloud, a restarted CA neither forgets
a half-drained node (upstream strips the taints at start, users' "CA forgets tainted nodes") nor
deletes it twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.loop.world import CAEvent, ClusterPort, LoopStats
from kubetide.cluster.reasons import EventReason
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import DrainContext, Outcome, pod_verdict

__all__ = ["Deletion", "add_to_be_deleted", "continue_deletions", "pods_to_evict", "remove_taint"]


@dataclass(frozen=True, slots=True)
class Deletion:
    node: NodeView
    group: NodeGroup
    since: float


def add_to_be_deleted(node: NodeView, now: float) -> tuple[Taint, ...]:
    kept = tuple(t for t in node.taints if t.key != TO_BE_DELETED_TAINT)
    return (*kept, Taint(TO_BE_DELETED_TAINT, str(int(now)), "NoSchedule"))


def remove_taint(node: NodeView, key: str) -> tuple[Taint, ...]:
    return tuple(t for t in node.taints if t.key != key)


def pods_to_evict(pods: Sequence[Pod], ctx: DrainContext, evict_daemonsets: bool) -> list[Pod]:
    """Pods that must leave before the node goes: every drainable pod (and DaemonSet pods, best effort)."""
    out = []
    for pod in pods:
        if pod.phase in ("Succeeded", "Failed"):
            continue
        outcome, _ = pod_verdict(pod, ctx)
        if (
            outcome is Outcome.DRAIN
            or outcome is Outcome.BLOCK
            or (outcome is Outcome.DAEMONSET and evict_daemonsets)
        ):
            out.append(pod)
    return out


def continue_deletions(
    deletions: Sequence[Deletion],
    pods_by_node: Mapping[str, Sequence[Pod]],
    port: ClusterPort,
    ctx: DrainContext,
    now: float,
    *,
    max_pod_eviction_time: float,
    is_deleting_in_cloud: Callable[[NodeView], bool],
    register_scale_down: Callable[[str, str], None],
    events: list[CAEvent],
    stats: LoopStats,
) -> None:
    for d in deletions:
        node = d.node
        gid = d.group.id()
        if is_deleting_in_cloud(node):
            continue
        pods = pods_by_node.get(node.name, ())
        # DaemonSet pods on occupied nodes are evicted best-effort; they never hold the node.
        to_move = pods_to_evict(pods, ctx, False)
        refused = [p for p in to_move if not port.evict(p)]
        if refused:
            if now - d.since > max_pod_eviction_time:
                port.set_node_taints(node.name, remove_taint(node, TO_BE_DELETED_TAINT))
                names = ", ".join(p.key for p in refused)
                events.append(
                    CAEvent(
                        "Warning",
                        EventReason.SCALE_DOWN_FAILED,
                        f"Node/{node.name}",
                        f"failed to drain and delete node: failed to evict pods from node {node.name}: {names}",
                        {"group": gid, "node": node.name},
                    )
                )
            continue
        try:
            d.group.delete_nodes([node])
        except CloudProviderError as exc:
            port.set_node_taints(node.name, remove_taint(node, TO_BE_DELETED_TAINT))
            events.append(
                CAEvent(
                    "Warning",
                    EventReason.SCALE_DOWN_FAILED,
                    f"Node/{node.name}",
                    f"failed to delete node: {exc}",
                    {"group": gid, "node": node.name},
                )
            )
            continue
        register_scale_down(gid, node.name)
        stats.nodes_removed += 1
        events.append(
            CAEvent(
                "Normal",
                EventReason.SCALE_DOWN,
                f"Node/{node.name}",
                "nodes removed by cluster autoscaler",
                {"group": gid, "node": node.name},
            )
        )
