"""Scale-down deletions in progress (CA spec §7.8 steps 3-6), with their state kept on the nodes, so a
restart resumes them.

A node CA started deleting carries ``ToBeDeletedByClusterAutoscaler=<unix seconds>:NoSchedule``. Each
round (every loop, and the deletion wake-ups between loops), :func:`continue_deletions` takes every
such node one step further, as upstream's drain goroutine would (:mod:`kubetide.cluster.loop.drain`
has its clocks): once ``--node-delete-delay-after-taint`` has passed it evicts the pods that must go,
each once, with CA's grace period (the Eviction API honours PDBs; a refused eviction is retried until
``--max-pod-eviction-time``), then waits for the evicted pods to be gone from the node (up to
``--max-graceful-termination-sec`` plus 30 s) and only then calls ``DeleteNodes``. A drain that fails
(evictions refused too long, pods still there after the wait) untaints the node with a
``ScaleDownFailed`` event. Before evicting, drainability is checked again: a pod that can no longer be
moved (a bare pod that landed on the node) aborts the deletion and the node is untainted. A node whose
instance is already Deleting in the cloud is left alone, so nothing is asked twice. Because the taint
and the cloud say which nodes are being deleted, a restarted CA neither forgets a half-drained node
(upstream strips the taints at start, users' "CA forgets tainted nodes") nor deletes it twice. An
eviction the API server fails (``ApiError``) counts as not done: the node waits like for a PDB, and is
never deleted with a pod whose fate is unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.loop.context import LoopContext, Recorder
from kubetide.cluster.loop.drain import (
    EVICTION_RETRY_S,
    WAIT_POLL_S,
    DrainSettings,
    DrainState,
    eviction_grace,
    non_expendable,
    ticks_since,
)
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.model.api import ApiError, ClusterPort, EvictionOutcome, NotFoundError
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import BlockReason, DrainContext, Outcome, pod_verdict
from kubetide.scheduling.utilization import is_daemonset_pod, is_mirror_pod

__all__ = [
    "Deletion",
    "DrainSettings",
    "DrainState",
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


def pods_to_evict(pods: Sequence[Pod], evict_daemonsets: bool) -> list[Pod]:
    """drain.go ``podsToEvict``: every pod of the node but mirror pods and (unless ``evict_daemonsets``)
    DaemonSet pods, whatever the drainability rules say of it (they decided whether the node may go; a
    pod being deleted, even for long, is evicted and waited for too). Finished pods are not counted."""
    return [
        p
        for p in pods
        if p.phase not in ("Succeeded", "Failed")
        and not is_mirror_pod(p)
        and (evict_daemonsets or not is_daemonset_pod(p))
    ]


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


def _evict(loop: LoopContext, port: ClusterPort, pod: Pod, grace: int) -> EvictionOutcome:
    try:
        return port.evict(pod, grace)
    except NotFoundError:
        return EvictionOutcome.GONE  # nothing left to evict
    except ApiError:
        # Unknown: counted, and retried at the next retry time as a PDB refusal would be; past
        # --max-pod-eviction-time the drain fails with ScaleDownFailed naming the pod.
        loop.api_errors += 1
        return EvictionOutcome.REFUSED


def _due(loop: LoopContext, at: float) -> None:
    waiting = loop.result.deletions_due_at
    loop.result.deletions_due_at = at if waiting is None else min(waiting, at)


def continue_deletions(
    loop: LoopContext,
    deletions: Sequence[Deletion],
    pods_by_node: Mapping[str, Sequence[Pod]],
    port: ClusterPort,
    recorder: Recorder,
    ctx: DrainContext,
    *,
    settings: DrainSettings,
    drains: dict[str, DrainState],
    is_deleting_in_cloud: Callable[[NodeView], bool],
    register_scale_down: Callable[[str, str], None],
) -> None:
    """One round of each deletion: wait out ``--node-delete-delay-after-taint`` (upstream sleeps that long
    after tainting, so schedulers see the taint before the drain), evict, wait for the evicted pods to
    go, delete (:mod:`kubetide.cluster.loop.drain` has the clocks). ``drains``: each node's drain state,
    kept by the caller from round to round; the loop result's ``deletions_due_at`` says when the next
    round is due."""
    now = loop.now
    for d in deletions:
        node = d.node
        if is_deleting_in_cloud(node):
            continue
        start = d.since + settings.delay_after_taint
        if now < start:
            _due(loop, start)
            continue
        state = drains.get(node.name)
        if state is None:
            state = drains[node.name] = DrainState()
        pods = non_expendable(pods_by_node.get(node.name, ()), settings.expendable_cutoff)
        data: dict[str, object] = {"group": d.group.id(), "node": node.name}
        blocking = undrainable_pod([p for p in pods if p.key not in state.evicted], ctx)
        if blocking is not None:
            # Re-checked right before evicting, as later CA versions' actuator does: a pod that cannot be
            # moved (a bare pod, safe-to-evict "false", local storage, a kube-system pod) landed on the
            # node after it was chosen; evicting it would lose it, so the deletion is abandoned.
            pod, why = blocking
            _abandon(
                loop,
                port,
                recorder,
                drains,
                node.name,
                data,
                f"failed to drain and delete node: pod {pod.key} can no longer be moved ({why}); "
                "deletion aborted",
            )
            continue
        # DaemonSet pods stay: they go with the node.
        to_move = pods_to_evict(pods, False)
        pending = [p for p in to_move if p.key not in state.evicted]
        if pending and not _evict_round(loop, d, start, pending, port, recorder, settings, state, data):
            drains.pop(node.name, None)
            continue
        if pending and any(p.key not in state.evicted for p in pending):
            continue  # refused evictions: retried at the next retry time
        if state.wait_from is None:
            state.wait_from = now
        if _gone(loop, d, state, pods, port, recorder, settings, drains, data):
            _delete(loop, d, port, recorder, drains, bool(state.evicted), register_scale_down, data)


def _evict_round(
    loop: LoopContext,
    d: Deletion,
    start: float,
    pending: Sequence[Pod],
    port: ClusterPort,
    recorder: Recorder,
    settings: DrainSettings,
    state: DrainState,
    data: dict[str, object],
) -> bool:
    """Evict the pods not evicted yet, if a retry time has come; False when the drain failed (past
    ``--max-pod-eviction-time`` with evictions still refused: ``evictPod`` gives up)."""
    tick = ticks_since(start, EVICTION_RETRY_S, loop.now)
    if tick <= state.eviction_tick:  # this retry time is done: wait for the next
        _due(loop, start + (state.eviction_tick + 1) * EVICTION_RETRY_S)
        return True
    state.eviction_tick = tick
    at = start + tick * EVICTION_RETRY_S
    in_time = at < start + settings.max_pod_eviction_time
    # evictPod tries each pod at least once, then again while the retry time is before the limit.
    attempt = pending if in_time else [p for p in pending if p.key not in state.tried]
    if not attempt:
        _give_up(loop, d, pending, port, recorder, data)
        return False
    for p in attempt:
        if p.key not in state.tried:
            state.tried.add(p.key)
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
        grace = eviction_grace(p, settings.max_graceful_termination_sec)
        outcome = _evict(loop, port, p, grace)
        if outcome is not EvictionOutcome.REFUSED:
            state.evicted[p.key] = 0 if outcome is EvictionOutcome.GONE else grace
            loop.evictions["succeeded"] = loop.evictions.get("succeeded", 0) + 1
    if any(p.key not in state.evicted for p in pending):
        _due(loop, start + (tick + 1) * EVICTION_RETRY_S)
    return True


def _give_up(
    loop: LoopContext,
    d: Deletion,
    refused: Sequence[Pod],
    port: ClusterPort,
    recorder: Recorder,
    data: dict[str, object],
) -> None:
    node = d.node.name
    _untaint(loop, port, recorder, node, data)
    loop.failed_deletions.append(node)
    loop.evictions["failed"] = loop.evictions.get("failed", 0) + len(refused)
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
            f"Node/{node}",
            f"failed to drain and delete node: failed to evict pods from node {node}: {names}",
            data,
        ),
    )


def _gone(
    loop: LoopContext,
    d: Deletion,
    state: DrainState,
    pods: Sequence[Pod],
    port: ClusterPort,
    recorder: Recorder,
    settings: DrainSettings,
    drains: dict[str, DrainState],
    data: dict[str, object],
) -> bool:
    """``waitPodsToDisappear``, one look per poll time: True when none of the evicted pods is left on the
    node (the node may go); past the limit the drain fails and the node is untainted."""
    assert state.wait_from is not None
    start = state.wait_from
    tick = ticks_since(start, WAIT_POLL_S, loop.now)
    if tick <= state.poll_tick:  # looked at this poll time already
        _due(loop, start + (state.poll_tick + 1) * WAIT_POLL_S)
        return False
    state.poll_tick = tick
    if tick * WAIT_POLL_S >= settings.wait_limit:
        _abandon(
            loop,
            port,
            recorder,
            drains,
            d.node.name,
            data,
            f"failed to drain and delete node: Failed to drain node /{d.node.name}: "
            "pods remaining after timeout",
        )
        return False
    # A pod is gone once no pod of its name is on the node (upstream: Get is NotFound, or the pod of
    # that name is on another node). The world may have been read before the pod's eviction: one
    # evicted with no grace period (or found gone) was deleted at once by the API server.
    evicted = state.evicted
    if any(evicted.get(p.key, 0) > 0 for p in pods):
        _due(loop, start + (tick + 1) * WAIT_POLL_S)
        return False
    return True


def _delete(
    loop: LoopContext,
    d: Deletion,
    port: ClusterPort,
    recorder: Recorder,
    drains: dict[str, DrainState],
    moved: bool,
    register_scale_down: Callable[[str, str], None],
    data: dict[str, object],
) -> None:
    node = d.node
    drains.pop(node.name, None)
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
        return
    loop.deleted.append(node.name)
    register_scale_down(d.group.id(), node.name)
    loop.result.stats.nodes_removed += 1
    reason = scale_down_reason(node, moved)
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


def _abandon(
    loop: LoopContext,
    port: ClusterPort,
    recorder: Recorder,
    drains: dict[str, DrainState],
    node: str,
    data: dict[str, object],
    message: str,
) -> None:
    """``CleanUpAndRecordFailedScaleDownEvent``: the event, the taint removed, the deletion over."""
    drains.pop(node, None)
    _untaint(loop, port, recorder, node, data)
    loop.failed_deletions.append(node)
    recorder.emit(loop, CAEvent("Warning", EventReason.SCALE_DOWN_FAILED, f"Node/{node}", message, data))


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
