"""Carries out one round of the deletions in progress (:class:`~.deletions.DrainStep`, decided by
:func:`~.deletions.plan_step`): evictions through the cluster port, ``DeleteNodes`` through the cloud,
the taint removed from a node whose deletion failed; each node's drain state kept in
:attr:`Execution.drains` for the next round.

Each step runs in the order of the plan, so a node's evictions, then its deletion, come before the next
node's, as upstream's goroutines would (they do not wait for each other). What the evictions answer
decides the rest of the node's round (:func:`~.deletions.look`), and once every step is over, the
atomic groups' deletions (:func:`~.deletions.atomic_batches`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from kubetide.cloud.instance import CloudProviderError
from kubetide.cluster.loop.deletions import (
    Deletion,
    DrainStep,
    LookResult,
    StepKind,
    atomic_batches,
    failure_prefix,
    look,
    scale_down_reason,
)
from kubetide.cluster.loop.drain import EVICTION_RETRY_S, DrainState
from kubetide.cluster.loop.execution import Execution
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.model.api import ApiError, EvictionOutcome, NotFoundError
from kubetide.model.pod import Pod

__all__ = ["execute_drain_round", "untaint"]


def execute_drain_round(run: Execution, steps: Sequence[DrainStep]) -> None:
    """Each step, then the atomic groups' batches."""
    failed: list[str] = []
    for step in steps:
        if not _step(run, step):
            failed.append(step.deletion.node.name)
    for batch, delete in atomic_batches(steps, failed, _ready(run)):
        if delete:
            _delete(run, batch)
            continue
        for d in batch:
            if d.node.name not in run.outcome.failed_deletions:
                _abandon(
                    run,
                    d,
                    f"{failure_prefix(d)}: couldn't scale down other nodes in this node group",
                )


def _ready(run: Execution) -> Callable[[str], bool]:
    def ready(name: str) -> bool:
        state = run.drains.get(name)
        return state is not None and state.ready

    return ready


def _step(run: Execution, step: DrainStep) -> bool:
    """One deletion's step; False when its deletion failed this round."""
    d, kind = step.deletion, step.kind
    if kind is StepKind.SKIP:
        return True
    if step.due is not None:
        run.outcome.due(step.due)
    if kind is StepKind.NOT_YET:
        return True
    assert step.state is not None
    run.drains[d.node.name] = step.state
    if kind is StepKind.ABORT:
        _abandon(run, d, step.message)
        return False
    if kind is StepKind.GIVE_UP:
        _give_up(run, d, step.refused)
        run.drains.pop(d.node.name, None)
        return False
    state = step.state
    if kind is StepKind.EVICT:
        evicted = _evict(run, step)
        if evicted is None:
            return True  # refused evictions: retried at the next retry time
        state = evicted
    if kind in (StepKind.EVICT, StepKind.LOOK):
        return _look(run, d, state, step.pods)
    return True  # HOLD, RETRY_LATER


def _evict(run: Execution, step: DrainStep) -> DrainState | None:
    """The step's evictions, announced first; the drain's state after them, or None when one is left
    to evict (the next retry time is due)."""
    d = step.deletion
    data: dict[str, object] = {"group": d.group.id(), "node": d.node.name}
    for p in step.announce:
        run.emit(
            CAEvent(
                "Normal",
                EventReason.SCALE_DOWN,
                f"Pod/{p.key}",
                "deleting pod for node scale down",
                {**data, "pod": p.key},
            )
        )
    assert step.state is not None
    evicted = dict(step.state.evicted)
    for p, grace in step.evict:
        outcome = _evict_pod(run, p, grace)
        if outcome is not EvictionOutcome.REFUSED:
            evicted[p.key] = 0 if outcome is EvictionOutcome.GONE else grace
            run.outcome.count(run.outcome.evictions, "succeeded")
    over = set(step.state.best_effort_over)
    for (
        p,
        grace,
    ) in step.best_effort:  # initiateEviction counts none of these (bestEffortEvictionConfirmations)
        if _evict_pod(run, p, grace) is not EvictionOutcome.REFUSED:
            over.add(p.key)
    state = replace(step.state, evicted=evicted, best_effort_over=frozenset(over))
    run.drains[d.node.name] = state
    if any(p.key not in evicted for p, _ in step.evict) or any(
        p.key not in over for p, _ in step.best_effort
    ):
        run.outcome.due(state.started + (step.tick + 1) * EVICTION_RETRY_S)
        return None
    return state


def _evict_pod(run: Execution, pod: Pod, grace: int) -> EvictionOutcome:
    try:
        return run.port.evict(pod, grace)
    except NotFoundError:
        return EvictionOutcome.GONE  # nothing left to evict
    except ApiError as exc:
        # Unknown: counted, and retried at the next retry time as a PDB refusal would be; past
        # --max-pod-eviction-time the drain fails with ScaleDownFailed naming the pod.
        run.outcome.api_errors += 1
        run.outcome.fail("evict", f"Pod/{pod.key}", exc)
        return EvictionOutcome.REFUSED


def _look(run: Execution, d: Deletion, state: DrainState, pods: Sequence[Pod]) -> bool:
    seen = look(d, state, pods, run.settings, run.now)
    run.drains[d.node.name] = seen.state
    if seen.due is not None:
        run.outcome.due(seen.due)
    if seen.result is LookResult.TIMEOUT:
        _abandon(run, d, seen.message)
        return False
    if seen.result is LookResult.READY:
        if d.atomic:
            run.drains[d.node.name] = replace(seen.state, ready=True)
        else:
            _delete(run, [d])
    return True


def _give_up(run: Execution, d: Deletion, refused: Sequence[Pod]) -> None:
    node = d.node.name
    data: dict[str, object] = {"group": d.group.id(), "node": node}
    untaint(run, node, data)
    run.outcome.failed_deletions.append(node)
    run.outcome.count(run.outcome.evictions, "failed", len(refused))
    for p in refused:  # upstream's evictor, giving up on a pod (DaemonSet pods aside)
        run.emit(
            CAEvent(
                "Warning",
                EventReason.SCALE_DOWN_FAILED,
                f"Pod/{p.key}",
                "failed to delete pod for ScaleDown",
                {**data, "pod": p.key},
            )
        )
    names = ", ".join(p.key for p in refused)
    run.emit(
        CAEvent(
            "Warning",
            EventReason.SCALE_DOWN_FAILED,
            f"Node/{node}",
            f"{failure_prefix(d)}: failed to evict pods from node {node}: {names}",
            data,
        )
    )


def _delete(run: Execution, batch: Sequence[Deletion]) -> None:
    """``deleteNodesFromCloudProvider``: one ``DeleteNodes`` call for the batch (a node, or a whole
    atomic group); if it fails, every node of it fails."""
    group = batch[0].group
    gid = group.id()
    for d in batch:
        run.drains.pop(d.node.name, None)
    try:
        group.delete_nodes([d.node for d in batch])
    except CloudProviderError as exc:
        run.outcome.fail("delete_nodes", f"NodeGroup/{gid}", exc)
        for d in batch:
            data: dict[str, object] = {"group": gid, "node": d.node.name}
            untaint(run, d.node.name, data)
            run.outcome.failed_deletions.append(d.node.name)
            run.emit(
                CAEvent(
                    "Warning",
                    EventReason.SCALE_DOWN_FAILED,
                    f"Node/{d.node.name}",
                    f"{failure_prefix(d)}: failed to delete nodes from group {gid}: {exc}",
                    data,
                )
            )
        return
    for d in batch:
        node = d.node
        run.outcome.deleted.append(node.name)
        run.registry.register_scale_down(gid, node.name, run.now)
        run.outcome.stats.nodes_removed += 1
        run.outcome.count(run.outcome.scaled_down, scale_down_reason(node, d.drain))
        run.emit(
            CAEvent(
                "Normal",
                EventReason.SCALE_DOWN,
                f"Node/{node.name}",
                "nodes removed by cluster autoscaler",
                {"group": gid, "node": node.name},
            )
        )


def _abandon(run: Execution, d: Deletion, message: str) -> None:
    """``CleanUpAndRecordFailedScaleDownEvent``: the event, the taint removed (and the node uncordoned
    with ``--cordon-node-before-terminating``), the deletion over."""
    node = d.node.name
    data: dict[str, object] = {"group": d.group.id(), "node": node}
    run.drains.pop(node, None)
    untaint(run, node, data)
    run.outcome.failed_deletions.append(node)
    run.emit(CAEvent("Warning", EventReason.SCALE_DOWN_FAILED, f"Node/{node}", message, data))


def untaint(run: Execution, node: str, data: dict[str, object], *, cordon: bool | None = None) -> None:
    """``CleanToBeDeleted``: the ToBeDeleted taint removed and, with ``cordon`` (by default
    ``--cordon-node-before-terminating``), ``spec.unschedulable`` set back to false."""
    # The deletion is abandoned: the node may take pods again. If the API refuses, the taint stays and
    # the node counts as being deleted until the deletion window passes, then the startup cleanup or
    # the next deletion deals with it.
    removed = run.api_call(
        EventReason.SCALE_DOWN_FAILED,
        f"Node/{node}",
        f"failed to remove {TO_BE_DELETED_TAINT} taint",
        data,
        run.port.remove_node_taint,
        node,
        TO_BE_DELETED_TAINT,
    )
    if removed and (run.settings.cordon if cordon is None else cordon):
        run.api_call(
            EventReason.SCALE_DOWN_FAILED,
            f"Node/{node}",
            f"failed to remove {TO_BE_DELETED_TAINT} taint",
            data,
            run.port.set_node_unschedulable,
            node,
            False,
        )
