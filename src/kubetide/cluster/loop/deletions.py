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
moved (a bare pod that landed on the node) aborts the deletion and the node is untainted. DaemonSet pods
are evicted best-effort as ``--daemonset-eviction-for-occupied-nodes`` / ``-empty-nodes`` say, never
waited for. The nodes of an atomic group go in one ``DeleteNodes`` call once all are drained, and one
failure fails them all (``GroupDeletionScheduler``, ``deleteNodesFromCloudProvider``). A node whose
instance is already Deleting in the cloud is left alone, so nothing is asked twice. Because the taint
and the cloud say which nodes are being deleted, a restarted CA neither forgets a half-drained node
(upstream strips the taints at start, users' "CA forgets tainted nodes") nor deletes it twice. An
eviction the API server fails (``ApiError``) counts as not done: the node waits like for a PDB, and is
never deleted with a pod whose fate is unknown.
"""

from __future__ import annotations

import enum
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
    daemonset_pods_to_evict,
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
    "untaint",
]


@dataclass(frozen=True, slots=True)
class Deletion:
    """A node being deleted: since when (its taint), whether it was started as a drain (else as an empty
    node: ``StartDeletionWithDrain`` or ``StartDeletion``), whether its group is atomic (ZeroOrMax)."""

    node: NodeView
    group: NodeGroup
    since: float
    drain: bool = True
    atomic: bool = False


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


def scale_down_reason(node: NodeView, drain: bool) -> str:
    """CA's ``scaled_down_nodes_total{reason}`` (``nodeScaleDownReason``): unready nodes first, then a
    drained node is underutilized, an empty one empty."""
    if not is_node_ready(node):
        return "unready"
    return "underutilized" if drain else "empty"


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


def _failure_prefix(d: Deletion) -> str:
    """``CleanUpAndRecordFailedScaleDownEvent``'s wording: a drained node's, or an empty node's."""
    return "failed to drain and delete node" if d.drain else "failed to delete empty node"


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
    round is due. The nodes of an atomic (ZeroOrMaxNodeScaling) group are deleted together, in one
    ``DeleteNodes`` call once all of them are ready, or not at all (``GroupDeletionScheduler``)."""
    now = loop.now
    batches: dict[str, list[Deletion]] = {}  # atomic group -> its deletions this round
    failed_groups: set[str] = set()
    for d in deletions:
        node = d.node
        if is_deleting_in_cloud(node):
            continue
        if d.atomic:
            batches.setdefault(d.group.id(), []).append(d)
        start = d.since + settings.delay_after_taint
        if now < start:
            _due(loop, start)
            continue
        state = drains.get(node.name)
        if state is None:
            # initiateEviction's ``retryUntil`` counts from here (a restarted process: from now).
            state = drains[node.name] = DrainState(started=now)
        if state.ready:
            continue  # drained: waiting for the rest of its atomic group
        outcome = _drain_round(loop, d, state, pods_by_node, port, recorder, ctx, settings, drains)
        if outcome is _Round.FAILED:
            if d.atomic:
                failed_groups.add(d.group.id())
        elif outcome is _Round.READY:
            if d.atomic:
                state.ready = True
            else:
                _delete(loop, [d], port, recorder, drains, register_scale_down, settings.cordon)
    for gid, batch in batches.items():
        if gid in failed_groups:
            # AbortNodeDeletion: the group is scaled down as a whole or not at all.
            for d in batch:
                if d.node.name not in loop.failed_deletions:
                    _abandon(
                        loop,
                        port,
                        recorder,
                        drains,
                        d.node.name,
                        {"group": gid, "node": d.node.name},
                        f"{_failure_prefix(d)}: couldn't scale down other nodes in this node group",
                        cordon=settings.cordon,
                    )
            continue
        if all((st := drains.get(d.node.name)) is not None and st.ready for d in batch):
            _delete(loop, batch, port, recorder, drains, register_scale_down, settings.cordon)


class _Round(enum.Enum):
    WAITING = "waiting"  # evictions or the wait go on: a later round continues
    READY = "ready"  # the evicted pods are gone: the node may go
    FAILED = "failed"  # the drain failed; the node was untainted


def _drain_round(
    loop: LoopContext,
    d: Deletion,
    state: DrainState,
    pods_by_node: Mapping[str, Sequence[Pod]],
    port: ClusterPort,
    recorder: Recorder,
    ctx: DrainContext,
    settings: DrainSettings,
    drains: dict[str, DrainState],
) -> _Round:
    node = d.node
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
            f"{_failure_prefix(d)}: pod {pod.key} can no longer be moved ({why}); deletion aborted",
            cordon=settings.cordon,
        )
        return _Round.FAILED
    if state.best_effort is None:
        # The DaemonSet pods the node has when its drain starts (createSnapshot), evicted best-effort.
        evict_by_default = (
            settings.daemonset_eviction_for_occupied_nodes
            if d.drain
            else settings.daemonset_eviction_for_empty_nodes
        )
        state.best_effort = tuple(p.key for p in daemonset_pods_to_evict(pods, evict_by_default))
    # DaemonSet pods are not moved: the ones chosen above are evicted best-effort, the others stay.
    to_move = pods_to_evict(pods, False)
    pending = [p for p in to_move if p.key not in state.evicted]
    over = state.best_effort_over
    best_effort = [p for p in pods if p.key in state.best_effort and p.key not in over]
    # A chosen DaemonSet pod no longer on the node needs no eviction.
    over.update(set(state.best_effort) - {p.key for p in pods})
    if pending or best_effort:
        if not _evict_round(loop, d, pending, best_effort, port, recorder, settings, state, data):
            drains.pop(node.name, None)
            return _Round.FAILED
        if any(p.key not in state.evicted for p in pending) or any(p.key not in over for p in best_effort):
            return _Round.WAITING  # refused evictions: retried at the next retry time
    if state.wait_from is None:
        state.wait_from = loop.now
    if _gone(loop, d, state, pods, port, recorder, settings, drains, data):
        return _Round.READY
    return _Round.FAILED if node.name not in drains else _Round.WAITING


def _evict_round(
    loop: LoopContext,
    d: Deletion,
    pending: Sequence[Pod],
    best_effort: Sequence[Pod],
    port: ClusterPort,
    recorder: Recorder,
    settings: DrainSettings,
    state: DrainState,
    data: dict[str, object],
) -> bool:
    """Evict the pods not evicted yet (and the DaemonSet pods best-effort), if a retry time has come;
    False when the drain failed: a pod to move is still not evicted at the first retry time at or after
    ``--max-pod-eviction-time`` (``evictPod`` makes no attempt then)."""
    start = state.started
    tick = ticks_since(start, EVICTION_RETRY_S, loop.now)
    if tick <= state.eviction_tick:  # this retry time is done: wait for the next
        _due(loop, start + (state.eviction_tick + 1) * EVICTION_RETRY_S)
        return True
    state.eviction_tick = tick
    if not settings.in_time(tick):
        # retryUntil has passed: the DaemonSet pods' evictions end with no error; a pod to move that
        # was not evicted (refused until now, or come since) fails the drain.
        state.best_effort_over.update(p.key for p in best_effort)
        if pending:
            _give_up(loop, d, pending, port, recorder, data, settings.cordon)
            return False
        return True
    for p in [*pending, *best_effort]:
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
    for p in pending:
        grace = eviction_grace(p, settings.max_graceful_termination_sec)
        outcome = _evict(loop, port, p, grace)
        if outcome is not EvictionOutcome.REFUSED:
            state.evicted[p.key] = 0 if outcome is EvictionOutcome.GONE else grace
            loop.evictions["succeeded"] = loop.evictions.get("succeeded", 0) + 1
    for p in best_effort:  # initiateEviction counts none of these (bestEffortEvictionConfirmations)
        grace = eviction_grace(p, settings.max_graceful_termination_sec)
        if _evict(loop, port, p, grace) is not EvictionOutcome.REFUSED:
            state.best_effort_over.add(p.key)
    if any(p.key not in state.evicted for p in pending) or any(
        p.key not in state.best_effort_over for p in best_effort
    ):
        _due(loop, start + (tick + 1) * EVICTION_RETRY_S)
    return True


def _give_up(
    loop: LoopContext,
    d: Deletion,
    refused: Sequence[Pod],
    port: ClusterPort,
    recorder: Recorder,
    data: dict[str, object],
    cordon: bool,
) -> None:
    node = d.node.name
    untaint(loop, port, recorder, node, data, cordon=cordon)
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
            f"{_failure_prefix(d)}: failed to evict pods from node {node}: {names}",
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
    node (the node may go); past the limit the drain fails and the node is untainted. DaemonSet pods
    evicted best-effort are not waited for."""
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
            f"{_failure_prefix(d)}: Failed to drain node /{d.node.name}: pods remaining after timeout",
            cordon=settings.cordon,
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
    batch: Sequence[Deletion],
    port: ClusterPort,
    recorder: Recorder,
    drains: dict[str, DrainState],
    register_scale_down: Callable[[str, str], None],
    cordon: bool,
) -> None:
    """``deleteNodesFromCloudProvider``: one ``DeleteNodes`` call for the batch (a node, or a whole
    atomic group); if it fails, every node of it fails."""
    group = batch[0].group
    gid = group.id()
    for d in batch:
        drains.pop(d.node.name, None)
    try:
        group.delete_nodes([d.node for d in batch])
    except CloudProviderError as exc:
        for d in batch:
            data: dict[str, object] = {"group": gid, "node": d.node.name}
            untaint(loop, port, recorder, d.node.name, data, cordon=cordon)
            loop.failed_deletions.append(d.node.name)
            recorder.emit(
                loop,
                CAEvent(
                    "Warning",
                    EventReason.SCALE_DOWN_FAILED,
                    f"Node/{d.node.name}",
                    f"{_failure_prefix(d)}: failed to delete nodes from group {gid}: {exc}",
                    data,
                ),
            )
        return
    for d in batch:
        node = d.node
        loop.deleted.append(node.name)
        register_scale_down(gid, node.name)
        loop.result.stats.nodes_removed += 1
        reason = scale_down_reason(node, d.drain)
        loop.scaled_down[reason] = loop.scaled_down.get(reason, 0) + 1
        recorder.emit(
            loop,
            CAEvent(
                "Normal",
                EventReason.SCALE_DOWN,
                f"Node/{node.name}",
                "nodes removed by cluster autoscaler",
                {"group": gid, "node": node.name},
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
    *,
    cordon: bool,
) -> None:
    """``CleanUpAndRecordFailedScaleDownEvent``: the event, the taint removed (and the node uncordoned
    with ``--cordon-node-before-terminating``), the deletion over."""
    drains.pop(node, None)
    untaint(loop, port, recorder, node, data, cordon=cordon)
    loop.failed_deletions.append(node)
    recorder.emit(loop, CAEvent("Warning", EventReason.SCALE_DOWN_FAILED, f"Node/{node}", message, data))


def untaint(
    loop: LoopContext,
    port: ClusterPort,
    recorder: Recorder,
    node: str,
    data: dict[str, object],
    *,
    cordon: bool,
) -> None:
    """``CleanToBeDeleted``: the ToBeDeleted taint removed and, with ``cordon``, ``spec.unschedulable``
    set back to false."""
    # The deletion is abandoned: the node may take pods again. If the API refuses, the taint stays and
    # the node counts as being deleted until the deletion window passes, then the startup cleanup or
    # the next deletion deals with it.
    removed = recorder.api_call(
        loop,
        EventReason.SCALE_DOWN_FAILED,
        f"Node/{node}",
        f"failed to remove {TO_BE_DELETED_TAINT} taint",
        data,
        port.remove_node_taint,
        node,
        TO_BE_DELETED_TAINT,
    )
    if removed and cordon:
        recorder.api_call(
            loop,
            EventReason.SCALE_DOWN_FAILED,
            f"Node/{node}",
            f"failed to remove {TO_BE_DELETED_TAINT} taint",
            data,
            port.set_node_unschedulable,
            node,
            False,
        )
