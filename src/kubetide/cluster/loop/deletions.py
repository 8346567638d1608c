"""Scale-down deletions in progress (CA spec §7.8 steps 3-6), with their state kept on the nodes, so a
restart resumes them: this module decides each round's step of each deletion;
:mod:`kubetide.cluster.loop.drain_actuator` carries the steps out.

A node CA started deleting carries ``ToBeDeletedByClusterAutoscaler=<unix seconds>:NoSchedule``
(:func:`deletions_in_progress` finds them). Each round (every loop, and the deletion wake-ups between
loops) takes every such node one step further, as upstream's drain goroutine would
(:mod:`kubetide.cluster.loop.drain` has its clocks): once ``--node-delete-delay-after-taint`` has
passed it evicts the pods that must go, each once, with CA's grace period (the Eviction API honours
PDBs; a refused eviction is retried until ``--max-pod-eviction-time``), then waits for the evicted pods
to be gone from the node (up to ``--max-graceful-termination-sec`` plus 30 s) and only then calls
``DeleteNodes``. A drain that fails (evictions refused too long, pods still there after the wait)
untaints the node with a ``ScaleDownFailed`` event. Before evicting, drainability is checked again: a
pod that can no longer be moved (a bare pod that landed on the node) aborts the deletion and the node
is untainted. DaemonSet pods are evicted best-effort as ``--daemonset-eviction-for-occupied-nodes`` /
``-empty-nodes`` say, never waited for. The nodes of an atomic group go in one ``DeleteNodes`` call
once all are drained, and one failure fails them all (``GroupDeletionScheduler``,
``deleteNodesFromCloudProvider``). A node whose instance is already Deleting in the cloud is left
alone, so nothing is asked twice. Because the taint and the cloud say which nodes are being deleted, a
restarted CA neither forgets a half-drained node (upstream strips the taints at start, users' "CA
forgets tainted nodes") nor deletes it twice. An eviction the API server fails (``ApiError``) counts as
not done: the node waits like for a PDB, and is never deleted with a pod whose fate is unknown.

A step is decided from the drain's state before the round (:func:`plan_step`); what an eviction
answered decides the rest of the round (:func:`look`, once nothing is left to evict, and
:func:`atomic_batches`, once every node's step is over).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.readiness import is_node_ready
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
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.scaledown.taints import (
    MAX_NODE_DELETION_TIME_S,
    TO_BE_DELETED_TAINT,
    is_being_deleted,
    to_be_deleted_time,
)
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import BlockReason, DrainContext, Outcome, pod_verdict
from kubetide.scheduling.utilization import is_daemonset_pod, is_mirror_pod

__all__ = [
    "Deletion",
    "DrainSettings",
    "DrainState",
    "DrainStep",
    "Look",
    "LookResult",
    "StepKind",
    "atomic_batches",
    "deletions_in_progress",
    "failure_prefix",
    "look",
    "plan_step",
    "pods_to_evict",
    "scale_down_reason",
    "tainted_view",
    "to_be_deleted_taint",
    "undrainable_pod",
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


def tainted_view(node: NodeView, now: float, cordon: bool) -> NodeView:
    """``node`` as ``MarkToBeDeleted`` leaves it: the ToBeDeleted taint of ``now`` (replacing an older
    one) and, with ``cordon``, unschedulable."""
    taint = to_be_deleted_taint(now)
    kept = tuple(t for t in node.taints if t.key != taint.key)
    view = replace(node, taints=(*kept, taint))
    return replace(view, unschedulable=True) if cordon else view


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


def failure_prefix(d: Deletion) -> str:
    """``CleanUpAndRecordFailedScaleDownEvent``'s wording: a drained node's, or an empty node's."""
    return "failed to drain and delete node" if d.drain else "failed to delete empty node"


def deletions_in_progress(
    view: LoopView,
    tainted_at: Mapping[str, float],
    draining: Collection[str],
    started_as_drain: Callable[[str, Sequence[Pod]], bool],
    atomic: Callable[[str], bool],
) -> list[Deletion]:
    """The nodes being deleted, from their ToBeDeleted taints: those within the deletion window
    (:data:`MAX_NODE_DELETION_TIME_S`), and those whose drain this process runs (``draining``: a drain
    goes on past the window, its wait alone may take ``--max-graceful-termination-sec``, as upstream's
    goroutine does). ``tainted_at``: when this process tainted each node it is deleting (the taint keeps
    whole seconds only); a node it tainted whose taint the world does not show (a dry run dropped the
    write, or a watch has not caught up) is being deleted all the same."""
    out = []
    now = view.now
    for node in view.nodes:
        since = to_be_deleted_time(node) if node.taints else None
        exact = tainted_at.get(node.name) if tainted_at else None
        if since is None and exact is None:
            continue  # not being deleted: most nodes
        gid = view.group_of.get(node.name)
        if since is None and exact is not None and now - exact < MAX_NODE_DELETION_TIME_S:
            node, since = replace(node, taints=(*node.taints, to_be_deleted_taint(exact))), exact
        if since is None or gid is None:
            continue
        if not is_being_deleted(node, now) and node.name not in draining:
            continue
        if exact is not None and int(exact) == int(since):
            since = exact
        drain = started_as_drain(node.name, view.pods_by_node.get(node.name, ()))
        out.append(Deletion(node, view.groups[gid], since, drain, atomic(gid)))
    return out


class StepKind(enum.Enum):
    """What one round does with one deletion."""

    SKIP = "skip"  # its instance is already being deleted in the cloud: nothing is asked twice
    NOT_YET = "notYet"  # --node-delete-delay-after-taint has not passed since the taint
    HOLD = "hold"  # drained: it waits for the rest of its atomic group
    ABORT = "abort"  # a pod can no longer be moved: the deletion is abandoned
    RETRY_LATER = "retryLater"  # refused evictions: retried at the next retry time
    GIVE_UP = "giveUp"  # a pod is still not evicted at --max-pod-eviction-time: the drain fails
    EVICT = "evict"  # evict the pods not evicted yet (and DaemonSet pods best-effort), then look
    LOOK = "look"  # nothing left to evict: look for the evicted pods, delete once they are gone


@dataclass(frozen=True, slots=True)
class DrainStep:
    """One deletion's step this round. ``state``: the drain's state once the step is decided (None for
    SKIP and NOT_YET: the drain has not started); ``due``: when the next round is due for it."""

    deletion: Deletion
    kind: StepKind
    state: DrainState | None = None
    due: float | None = None
    message: str = ""  # ABORT: the ScaleDownFailed event's message
    announce: tuple[Pod, ...] = ()  # EVICT: the pods whose eviction is asked for the first time
    evict: tuple[tuple[Pod, int], ...] = ()  # EVICT: the pods to move, each with its grace period
    best_effort: tuple[tuple[Pod, int], ...] = ()  # EVICT: DaemonSet pods evicted best-effort
    refused: tuple[Pod, ...] = ()  # GIVE_UP: the pods never evicted
    pods: tuple[Pod, ...] = ()  # EVICT and LOOK: the node's pods the drain moves or waits for
    tick: int = -1  # EVICT: the retry time (ticks of EVICTION_RETRY_S from the drain's start)


def plan_step(
    d: Deletion,
    state: DrainState | None,
    pods_by_node: Mapping[str, Sequence[Pod]],
    ctx: DrainContext,
    settings: DrainSettings,
    now: float,
    deleting_in_cloud: bool,
) -> DrainStep:
    """This round's step of deletion ``d`` whose drain is at ``state`` (None: not started)."""
    if deleting_in_cloud:
        return DrainStep(d, StepKind.SKIP)
    start = d.since + settings.delay_after_taint
    if now < start:
        return DrainStep(d, StepKind.NOT_YET, due=start)
    if state is None:  # initiateEviction's ``retryUntil`` counts from here (a restarted process: from now)
        state = DrainState(started=now)
    if state.ready:
        return DrainStep(d, StepKind.HOLD, state)
    node = d.node
    pods = tuple(non_expendable(pods_by_node.get(node.name, ()), settings.expendable_cutoff))
    blocking = undrainable_pod([p for p in pods if p.key not in state.evicted], ctx)
    if blocking is not None:
        # Re-checked right before evicting, as later CA versions' actuator does: a pod that cannot be
        # moved (a bare pod, safe-to-evict "false", local storage, a kube-system pod) landed on the
        # node after it was chosen; evicting it would lose it, so the deletion is abandoned.
        pod, why = blocking
        message = f"{failure_prefix(d)}: pod {pod.key} can no longer be moved ({why}); deletion aborted"
        return DrainStep(d, StepKind.ABORT, state, message=message)
    state = _best_effort_chosen(d, state, pods, settings)
    # DaemonSet pods are not moved: the ones chosen above are evicted best-effort, the others stay.
    pending = [p for p in pods_to_evict(pods, False) if p.key not in state.evicted]
    chosen, over = state.best_effort or (), state.best_effort_over
    best_effort = [p for p in pods if p.key in chosen and p.key not in over]
    gone = set(chosen) - {p.key for p in pods}  # a chosen DaemonSet pod no longer there needs no eviction
    if not gone <= over:
        state = replace(state, best_effort_over=over | gone)
    if not pending and not best_effort:
        return DrainStep(d, StepKind.LOOK, state, pods=pods)
    return _eviction_step(d, state, pods, pending, best_effort, settings, now)


def _best_effort_chosen(
    d: Deletion, state: DrainState, pods: Sequence[Pod], settings: DrainSettings
) -> DrainState:
    """The DaemonSet pods the node has when its drain starts (createSnapshot), evicted best-effort."""
    if state.best_effort is not None:
        return state
    by_default = (
        settings.daemonset_eviction_for_occupied_nodes
        if d.drain
        else settings.daemonset_eviction_for_empty_nodes
    )
    return replace(state, best_effort=tuple(p.key for p in daemonset_pods_to_evict(pods, by_default)))


def _eviction_step(
    d: Deletion,
    state: DrainState,
    pods: tuple[Pod, ...],
    pending: list[Pod],
    best_effort: list[Pod],
    settings: DrainSettings,
    now: float,
) -> DrainStep:
    """Evict the pods not evicted yet (and the DaemonSet pods best-effort), if a retry time has come;
    the drain fails when a pod to move is still not evicted at the first retry time at or after
    ``--max-pod-eviction-time`` (``evictPod`` makes no attempt then)."""
    tick = ticks_since(state.started, EVICTION_RETRY_S, now)
    if tick <= state.eviction_tick:  # this retry time is done: wait for the next
        due = state.started + (state.eviction_tick + 1) * EVICTION_RETRY_S
        return DrainStep(d, StepKind.RETRY_LATER, state, due=due)
    state = replace(state, eviction_tick=tick)
    if not settings.in_time(tick):
        # retryUntil has passed: the DaemonSet pods' evictions end with no error; a pod to move that
        # was not evicted (refused until now, or come since) fails the drain.
        state = replace(state, best_effort_over=state.best_effort_over | {p.key for p in best_effort})
        if pending:
            return DrainStep(d, StepKind.GIVE_UP, state, refused=tuple(pending))
        return DrainStep(d, StepKind.LOOK, state, pods=pods)
    tried = set(state.tried)
    announce = []
    for p in [*pending, *best_effort]:
        if p.key not in tried:
            tried.add(p.key)
            announce.append(p)
    grace = settings.max_graceful_termination_sec
    return DrainStep(
        d,
        StepKind.EVICT,
        replace(state, tried=frozenset(tried)),
        announce=tuple(announce),
        evict=tuple((p, eviction_grace(p, grace)) for p in pending),
        best_effort=tuple((p, eviction_grace(p, grace)) for p in best_effort),
        pods=pods,
        tick=tick,
    )


class LookResult(enum.Enum):
    WAIT = "wait"  # the evicted pods are not all gone, or this poll time was looked at: a later round
    READY = "ready"  # none of the evicted pods is left: the node may go
    TIMEOUT = "timeout"  # pods remain after the wait's limit: the drain fails


@dataclass(frozen=True, slots=True)
class Look:
    result: LookResult
    state: DrainState
    due: float | None = None
    message: str = ""  # TIMEOUT: the ScaleDownFailed event's message


def look(d: Deletion, state: DrainState, pods: Sequence[Pod], settings: DrainSettings, now: float) -> Look:
    """``waitPodsToDisappear``, one look per poll time, once every eviction is over: READY when none of
    the evicted pods is left on the node; past the limit the drain fails. DaemonSet pods evicted
    best-effort are not waited for."""
    if state.wait_from is None:
        state = replace(state, wait_from=now)
    start = state.wait_from
    assert start is not None
    tick = ticks_since(start, WAIT_POLL_S, now)
    if tick <= state.poll_tick:  # looked at this poll time already
        return Look(LookResult.WAIT, state, start + (state.poll_tick + 1) * WAIT_POLL_S)
    state = replace(state, poll_tick=tick)
    if tick * WAIT_POLL_S >= settings.wait_limit:
        message = f"{failure_prefix(d)}: Failed to drain node /{d.node.name}: pods remaining after timeout"
        return Look(LookResult.TIMEOUT, state, message=message)
    # A pod is gone once no pod of its name is on the node (upstream: Get is NotFound, or the pod of
    # that name is on another node). The world may have been read before the pod's eviction: one
    # evicted with no grace period (or found gone) was deleted at once by the API server.
    evicted = state.evicted
    if any(evicted.get(p.key, 0) > 0 for p in pods):
        return Look(LookResult.WAIT, state, start + (tick + 1) * WAIT_POLL_S)
    return Look(LookResult.READY, state)


def atomic_batches(
    steps: Sequence[DrainStep], failed: Collection[str], ready: Callable[[str], bool]
) -> list[tuple[list[Deletion], bool]]:
    """After a round, each atomic (ZeroOrMaxNodeScaling) group's deletions this round, with whether they
    are deleted now (True: every node of it is drained, in one ``DeleteNodes`` call) or abandoned
    (False: one of them failed this round; ``AbortNodeDeletion``, the group is scaled down as a whole or
    not at all). Groups with neither are left out. ``failed``: the nodes whose deletion failed this
    round; ``ready``: whether a node is drained."""
    batches: dict[str, list[Deletion]] = {}
    for step in steps:
        d = step.deletion
        if d.atomic and step.kind is not StepKind.SKIP:
            batches.setdefault(d.group.id(), []).append(d)
    out = []
    for batch in batches.values():
        if any(d.node.name in failed for d in batch):
            out.append((batch, False))
        elif all(ready(d.node.name) for d in batch):
            out.append((batch, True))
    return out
