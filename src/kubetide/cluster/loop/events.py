"""The loop's events as client-go's recorder would write them: the deduplication of status events
(:class:`Recorder`) and the events the cluster state's findings become (:func:`cluster_event`,
:func:`backoff_event`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubetide.cluster.clusterstate.registry import ClusterEvent, ClusterStateRegistry
from kubetide.cluster.expander.priority import CONFIG_MAP_NAME
from kubetide.cluster.goformat import go_duration
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason, KubetideEventReason

__all__ = [
    "CA_EVENT_OBJECT",
    "DEDUPLICATED_REASONS",
    "EVENT_DEDUP_WINDOW_S",
    "Recorder",
    "backoff_event",
    "cluster_event",
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


class Recorder:
    """The events a loop records, out of those its decisions and actions said. Status events repeat
    every loop while nothing changes; upstream's recorder drops repeats within 5 minutes, so this one
    does too (``--record-duplicated-events=false``). Events that report an action are all kept, so the
    log accounts for every action."""

    def __init__(self, record_duplicated: bool) -> None:
        self.record_duplicated = record_duplicated
        self._recent: dict[tuple[str, str, str], float] = {}

    def keep(self, events: Iterable[CAEvent], now: float) -> list[CAEvent]:
        """``events``, in order, but the repeats it drops (and remembers the ones it keeps)."""
        out = []
        for event in events:
            if not self.record_duplicated and event.reason in DEDUPLICATED_REASONS:
                key = (event.reason, event.object, event.message)
                last = self._recent.get(key)
                if last is not None and now - last < EVENT_DEDUP_WINDOW_S:
                    continue
                self._recent[key] = now
            out.append(event)
        return out


def cluster_event(ev: ClusterEvent, groups: Mapping[str, object], namespace: str) -> CAEvent:
    """A finding of the cluster state as an event: on its node group when it names one, on the priority
    expander's ConfigMap, or on the status ConfigMap."""
    obj = f"NodeGroup/{ev.object}" if ev.object in groups else CA_EVENT_OBJECT
    if ev.object == CONFIG_MAP_NAME:
        obj = f"ConfigMap/{namespace}/{CONFIG_MAP_NAME}"
    data: dict[str, object] = {"group": ev.object} if ev.object in groups else {}
    return CAEvent(ev.type, str(ev.reason), obj, ev.message, data)


def backoff_event(registry: ClusterStateRegistry, gid: str, now: float) -> CAEvent | None:
    """kubetide's ``NodeGroupBackoff`` for a group the cluster state just backed off (None: it is not)."""
    entry = registry.backoff.entry(gid)
    if entry is None:
        return None
    reason = entry.error_info.key if entry.error_info is not None else "unknown"
    return CAEvent(
        "Warning",
        str(KubetideEventReason.NODE_GROUP_BACKOFF),
        f"NodeGroup/{gid}",
        # A duration, as CA prints them: ``until`` is epoch seconds live (1.79582e+09s unread),
        # scenario seconds in the simulator; the exact time stays in the data.
        f"node group {gid} backed off for {go_duration(entry.until - now)} after failed scale-up ({reason})",
        {"group": gid, "until": entry.until},
    )
