"""Scale-down deletions in progress (CA spec §7.8 steps 3-6), with their state kept on the nodes, so a
restart resumes them.

A node CA started deleting carries ``ToBeDeletedByClusterAutoscaler=<unix seconds>:NoSchedule``.
Every loop, :func:`continue_deletions` looks at every such node that is still within the deletion
window: it evicts the pods that must go (the Eviction API honours PDBs; a refused eviction is retried
next loop until ``--max-pod-eviction-time``), and once nothing is left to move it calls
``DeleteNodes``. Before evicting, drainability is checked again: a pod that can no longer be moved (a
bare pod that landed on the node) aborts the deletion and the node is untainted. A node whose instance is already Deleting in the cloud is left alone, so nothing is
asked twice. Because all of this is read from the taint and the cloud, a restarted CA neither forgets
a half-drained node (upstream strips the taints at start, users' "CA forgets tainted nodes") nor
deletes it twice. An eviction the API server fails (``ApiError``) counts as not done: the node waits
like for a PDB, and is never deleted with a pod whose fate is unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.loop.context import LoopContext, Recorder
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.model.api import ApiError, ClusterPort, EvictionOutcome, NotFoundError
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import BlockReason, DrainContext, Outcome, pod_verdict

__all__ = [
    "Deletion",
    "continue_deletions",
    "pods_to_evict",
    "scale_down_reason",
    "to_be_deleted_taint",
    "undrainable_pod",
]


@dataclass(frozen=True, slots=True)
class Deletion:
    node: NodeView
    group: NodeGroup
    since: float


def to_be_deleted_taint(now: float) -> Taint:
    return Taint(TO_BE_DELETED_TAINT, str(int(now)), "NoSchedule")


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


# Reasons that abort a drain in progress: the ones CA's actuator re-checks with no listers and no PDB
# tracker. A PDB (the eviction API retries it) or a controller's replicas (our own evictions change
# them) must not abort a drain that was valid when it started.
_ABORTING = frozenset(
    {
        BlockReason.NOT_REPLICATED,
        BlockReason.UNMOVABLE_KUBE_SYSTEM_POD,
        BlockReason.NOT_SAFE_TO_EVICT_ANNOTATION,
        BlockReason.LOCAL_STORAGE_REQUESTED,
    }
)


def undrainable_pod(pods: Sequence[Pod], ctx: DrainContext) -> tuple[Pod, BlockReason] | None:
    """The first pod on a draining node that can no longer be moved, with why; None if none."""
    for pod in pods:
        if pod.phase in ("Succeeded", "Failed"):
            continue
        outcome, reason = pod_verdict(pod, ctx)
        if outcome is Outcome.BLOCK and reason in _ABORTING:
            return pod, reason
    return None


def scale_down_reason(node: NodeView, moved: bool) -> str:
    """CA's ``scaled_down_nodes_total{reason}``: unready nodes first, then empty or underutilized."""
    if not is_node_ready(node):
        return "unready"
    return "underutilized" if moved else "empty"


def _evict(loop: LoopContext, port: ClusterPort, pod: Pod) -> bool:
    """True when the pod is on its way out (evicted or already gone)."""
    try:
        return port.evict(pod) is not EvictionOutcome.REFUSED
    except NotFoundError:
        return True  # the pod is gone: nothing left to evict
    except ApiError:
        # Unknown: counted, and retried next loop as a PDB refusal would be; past
        # --max-pod-eviction-time the drain fails with ScaleDownFailed naming the pod.
        loop.api_errors += 1
        return False


def continue_deletions(
    loop: LoopContext,
    deletions: Sequence[Deletion],
    pods_by_node: Mapping[str, Sequence[Pod]],
    port: ClusterPort,
    recorder: Recorder,
    ctx: DrainContext,
    *,
    max_pod_eviction_time: float,
    is_deleting_in_cloud: Callable[[NodeView], bool],
    register_scale_down: Callable[[str, str], None],
    delay_after_taint: float = 0.0,
    announced: set[tuple[str, str]] | None = None,
) -> None:
    """``delay_after_taint``: ``--node-delete-delay-after-taint``; a node tainted less than that ago is
    left for later (upstream sleeps that long after tainting, so schedulers see the taint before the
    drain), and the loop result says when it is due. ``announced``: the (node, pod) evictions already
    announced by a ``ScaleDown`` event on the pod (CA's "deleting pod for node scale down"), so each is
    announced once however many loops its eviction takes."""
    announced = set() if announced is None else announced
    now = loop.now
    for d in deletions:
        node = d.node
        gid = d.group.id()
        if is_deleting_in_cloud(node):
            continue
        due = d.since + delay_after_taint
        if now < due:
            waiting = loop.result.deletions_due_at
            loop.result.deletions_due_at = due if waiting is None else min(waiting, due)
            continue
        pods = pods_by_node.get(node.name, ())
        data: dict[str, object] = {"group": gid, "node": node.name}
        blocking = undrainable_pod(pods, ctx)
        if blocking is not None:
            # Re-checked right before evicting, as later CA versions' actuator does: a pod that cannot be
            # moved (a bare pod, safe-to-evict "false", local storage, a kube-system pod) landed on the
            # node after it was chosen; evicting it would lose it, so the deletion is abandoned.
            _untaint(loop, port, recorder, node.name, data)
            loop.failed_deletions.append(node.name)
            pod, why = blocking
            recorder.emit(
                loop,
                CAEvent(
                    "Warning",
                    EventReason.SCALE_DOWN_FAILED,
                    f"Node/{node.name}",
                    f"failed to drain and delete node: pod {pod.key} can no longer be moved ({why}); "
                    "deletion aborted",
                    data,
                ),
            )
            continue
        # DaemonSet pods on occupied nodes are evicted best-effort; they never hold the node.
        to_move = pods_to_evict(pods, ctx, False)
        for p in to_move:
            if (node.name, p.key) not in announced:
                announced.add((node.name, p.key))
                recorder.emit(
                    loop,
                    CAEvent(
                        "Normal",
                        EventReason.SCALE_DOWN,
                        f"Pod/{p.key}",
                        "deleting pod for node scale down",
                        {**data, "pod": p.key},
                    ),
                )
        refused = [p for p in to_move if not _evict(loop, port, p)]
        if refused:
            if now - d.since > max_pod_eviction_time:
                _untaint(loop, port, recorder, node.name, data)
                loop.failed_deletions.append(node.name)
                for p in refused:  # upstream's evictor, giving up on a pod (DaemonSet pods aside)
                    recorder.emit(
                        loop,
                        CAEvent(
                            "Warning",
                            EventReason.SCALE_DOWN_FAILED,
                            f"Pod/{p.key}",
                            "failed to delete pod for ScaleDown",
                            {**data, "pod": p.key},
                        ),
                    )
                names = ", ".join(p.key for p in refused)
                recorder.emit(
                    loop,
                    CAEvent(
                        "Warning",
                        EventReason.SCALE_DOWN_FAILED,
                        f"Node/{node.name}",
                        f"failed to drain and delete node: failed to evict pods from node {node.name}: {names}",
                        data,
                    ),
                )
            continue
        try:
            d.group.delete_nodes([node])
        except CloudProviderError as exc:
            _untaint(loop, port, recorder, node.name, data)
            loop.failed_deletions.append(node.name)
            recorder.emit(
                loop,
                CAEvent(
                    "Warning",
                    EventReason.SCALE_DOWN_FAILED,
                    f"Node/{node.name}",
                    f"failed to delete node: {exc}",
                    data,
                ),
            )
            continue
        register_scale_down(gid, node.name)
        loop.result.stats.nodes_removed += 1
        reason = scale_down_reason(node, bool(to_move))
        loop.scaled_down[reason] = loop.scaled_down.get(reason, 0) + 1
        recorder.emit(
            loop,
            CAEvent(
                "Normal",
                EventReason.SCALE_DOWN,
                f"Node/{node.name}",
                "nodes removed by cluster autoscaler",
                data,
            ),
        )


def _untaint(
    loop: LoopContext, port: ClusterPort, recorder: Recorder, node: str, data: dict[str, object]
) -> None:
    # The deletion is abandoned: the node may take pods again. If the API refuses, the taint stays and
    # the node counts as being deleted until the deletion window passes, then the startup cleanup or
    # the next deletion deals with it.
    recorder.api_call(
        loop,
        EventReason.SCALE_DOWN_FAILED,
        f"Node/{node}",
        f"failed to remove {TO_BE_DELETED_TAINT} taint",
        data,
        port.remove_node_taint,
        node,
        TO_BE_DELETED_TAINT,
    )
