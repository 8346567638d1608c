"""What every stage of one Cluster Autoscaler loop shares: the loop's facts (:class:`LoopContext`) and the
event recorder that deduplicates status events as client-go's recorder does (:class:`Recorder`).

The stages (housekeeping, scale-up, scale-down and their actuators) take these two values instead of
the whole :class:`~kubetide.cluster.autoscaler.StaticAutoscaler`, so each can be read and tested alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.registry import ClusterEvent, ClusterStateRegistry
from kubetide.cluster.expander.priority import CONFIG_MAP_NAME
from kubetide.cluster.goformat import go_duration
from kubetide.cluster.loop.timing import FunctionTimer
from kubetide.cluster.loop.world import CAEvent, LoopResult, World
from kubetide.cluster.reasons import EventReason, KubetideEventReason
from kubetide.model.api import ApiError
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = [
    "CA_EVENT_OBJECT",
    "DEDUPLICATED_REASONS",
    "EVENT_DEDUP_WINDOW_S",
    "LoopContext",
    "Recorder",
]

EVENT_DEDUP_WINDOW_S = 300.0
CA_EVENT_OBJECT = "ConfigMap/kube-system/cluster-autoscaler-status"
DEDUPLICATED_REASONS = frozenset(
    {
        EventReason.NOT_TRIGGER_SCALE_UP,
        EventReason.MAX_NODES_TOTAL_REACHED,
        EventReason.CLUSTER_UNHEALTHY,
        EventReason.PRIORITY_CONFIG_MAP_INVALID,
        EventReason.PRIORITY_CONFIG_MAP_NOT_MATCHED_GROUP,
        EventReason.PRIORITY_CONFIG_MAP_NO_GROUP_MATCHED,
        KubetideEventReason.NODE_TEMPLATE_MISMATCH,
        KubetideEventReason.NODE_WITHOUT_PROVIDER_ID,
        KubetideEventReason.PRICES_UNAVAILABLE,
    }
)


@dataclass
class LoopContext:
    """Per-loop facts shared by the stages; ``nodes`` is the loop's own copy (cleanups edit it)."""

    now: float
    world: World
    result: LoopResult
    nodes: list[NodeView]
    group_of: dict[str, str | None]
    groups: dict[str, NodeGroup]
    pods_by_node: dict[str, Sequence[Pod]]  # each world node's pods, but Succeeded and Failed ones
    # Metrics counted while acting (CA's ``scaled_down_nodes_total{reason}``, ``failed_scale_ups_total``).
    scaled_down: dict[str, int] = field(default_factory=dict)
    failed_scale_ups: dict[str, int] = field(default_factory=dict)
    api_errors: int = 0
    # Nodes whose deletion failed this loop (drain or DeleteNodes): scale-down waits and skips them.
    failed_deletions: list[str] = field(default_factory=list)
    # Nodes whose DeleteNodes this loop called: never asked twice by the same process.
    deleted: list[str] = field(default_factory=list)
    # CA's ``evicted_pods_total{eviction_result}``: evictions accepted ("succeeded"), pods given up ("failed").
    evictions: dict[str, int] = field(default_factory=dict)
    # Ready nodes without providerID that match no instance: no instance is removed as unregistered.
    unidentified: tuple[str, ...] = ()
    gpu_label: str = ""  # the cloud's GPULabel: which nodes are GPU nodes (cluster.gpu)
    groups_known: bool = True  # every node's group lookup succeeded (``group_of`` is the cloud's answer)
    timer: FunctionTimer = field(default_factory=FunctionTimer)  # CA's function durations (no-op in sims)
    # Groups an all-or-nothing scale-up raised with IncreaseSize (the provider has no atomic increase).
    atomic_fallbacks: list[str] = field(default_factory=list)


class Recorder:
    """Events of the loop, into ``LoopResult.events``. Status events repeat every loop while nothing
    changes; upstream's recorder drops repeats within 5 minutes, so this one does too
    (``--record-duplicated-events=false``). Events that report an action are all kept, so the log
    accounts for every action."""

    def __init__(self, record_duplicated: bool, namespace: str) -> None:
        self.record_duplicated = record_duplicated
        self.namespace = namespace
        self._recent: dict[tuple[str, str, str], float] = {}

    def emit(self, loop: LoopContext, event: CAEvent) -> None:
        if not self.record_duplicated and event.reason in DEDUPLICATED_REASONS:
            key = (event.reason, event.object, event.message)
            last = self._recent.get(key)
            if last is not None and loop.now - last < EVENT_DEDUP_WINDOW_S:
                return
            self._recent[key] = loop.now
        loop.result.events.append(event)

    def cluster_event(self, loop: LoopContext, ev: ClusterEvent) -> None:
        obj = f"NodeGroup/{ev.object}" if ev.object in loop.groups else CA_EVENT_OBJECT
        if ev.object == CONFIG_MAP_NAME:
            obj = f"ConfigMap/{self.namespace}/{CONFIG_MAP_NAME}"
        data: dict[str, object] = {"group": ev.object} if ev.object in loop.groups else {}
        self.emit(loop, CAEvent(ev.type, str(ev.reason), obj, ev.message, data))

    def backoff_event(self, loop: LoopContext, registry: ClusterStateRegistry, gid: str) -> None:
        entry = registry.backoff.entry(gid)
        if entry is None:
            return
        loop.result.stats.backoffs += 1
        reason = entry.error_info.key if entry.error_info is not None else "unknown"
        self.emit(
            loop,
            CAEvent(
                "Warning",
                str(KubetideEventReason.NODE_GROUP_BACKOFF),
                f"NodeGroup/{gid}",
                # A duration, as CA prints them: ``until`` is epoch seconds live (1.79582e+09s unread),
                # scenario seconds in the simulator; the exact time stays in the data.
                f"node group {gid} backed off for {go_duration(entry.until - loop.now)} after failed "
                f"scale-up ({reason})",
                {"group": gid, "until": entry.until},
            ),
        )

    def api_call(
        self,
        loop: LoopContext,
        reason: str,
        obj: str,
        what: str,
        data: dict[str, object],
        write: Callable[..., object],
        *args: object,
    ) -> bool:
        """Run one API write, ``write(*args)``; on :class:`ApiError` report it (a Warning with CA's
        ``reason``), count it, and tell the caller (False) so it does not go on as if it had been made."""
        try:
            write(*args)
        except ApiError as exc:
            loop.api_errors += 1
            self.emit(loop, CAEvent("Warning", reason, obj, f"{what}: {exc}", data))
            return False
        return True
