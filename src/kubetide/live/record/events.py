"""The autoscalers' Events, as a recording keeps them: in the simulator's ``events.jsonl`` shape.

The Events written by a cluster autoscaler (``source.component`` ``cluster-autoscaler``, upstream's or
kubetide's), an HPA controller (``horizontal-pod-autoscaler``) and kubetide's batch autoscaler
(``escalator``) are watched. An Event seen again with a higher ``count`` happened again (client-go
aggregates repeats into one object): each repeat is one recorded event, at the Event's last timestamp.
The Events that exist when the recording starts happened before it and are not recorded (when it
resumes, those newer than what was recorded are). Only the Events of what the recording records are
kept (``keep``): an autoscaler acting on another namespace's objects is not the day replayed.

Each becomes ``{"t", "source", "reason", "object", "message", "data"}`` with the source and object
named as the simulator names them (``hpa``; ``Node/name``, ``HorizontalPodAutoscaler/ns/name``) and
the ``data`` the comparison reads: the group of a ``ScaledUpGroup`` (from its message, CA's wording) or
of a node's ``ScaleDown``, and the new size of an HPA's ``SuccessfulRescale``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.model.fields import parse_time

__all__ = ["COMPONENTS", "SCALE_UP_MESSAGE", "EventTracker"]

Json = dict[str, Any]
# source.component -> the simulator's event source.
COMPONENTS: Mapping[str, str] = {
    "cluster-autoscaler": "cluster-autoscaler",
    "horizontal-pod-autoscaler": "hpa",
    "escalator": "escalator",
}
# CA's ScaledUpGroup message, both of its forms (``executor.go``: before and after the increase).
SCALE_UP_MESSAGE = re.compile(
    r"^Scale-up: (?:setting group (\S+) size to|group (\S+) size set to) (\d+) instead of (\d+)"
)
_NEW_SIZE = re.compile(r"^New size: (\d+)")
_CLUSTER_SCOPED = frozenset({"Node", "Namespace", "PersistentVolume"})


def _seconds(text: Any) -> float | None:
    try:
        return parse_time(str(text)) if text else None
    except ValueError:
        return None


def _when(event: Mapping[str, Any]) -> float | None:
    series = event.get("series") or {}
    return (
        _seconds(event.get("lastTimestamp"))
        or _seconds(series.get("lastObservedTime") if isinstance(series, dict) else None)
        or _seconds(event.get("eventTime"))
        or _seconds((event.get("metadata") or {}).get("creationTimestamp"))
    )


def _count(event: Mapping[str, Any]) -> int:
    series = event.get("series") or {}
    value = event.get("count") or (series.get("count") if isinstance(series, dict) else None) or 1
    return value if isinstance(value, int) and value > 0 else 1


def _object(event: Mapping[str, Any]) -> str:
    involved = event.get("involvedObject") or {}
    kind, name = str(involved.get("kind", "")), str(involved.get("name", ""))
    namespace = involved.get("namespace")
    if kind in _CLUSTER_SCOPED or not namespace:
        return f"{kind}/{name}"
    return f"{kind}/{namespace}/{name}"


def _source(event: Mapping[str, Any]) -> str | None:
    component = (event.get("source") or {}).get("component") or event.get("reportingComponent") or ""
    return COMPONENTS.get(str(component))


@dataclass
class EventTracker:
    start: float
    group_of_node: Callable[[str], str | None]
    # Which Events are the recording's (those of the objects it records: another namespace's are not).
    keep: Callable[[Mapping[str, Any]], bool] = lambda event: True
    # Per watch (one per component): event uid -> occurrences seen.
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def begin(
        self, scope: str, events: Iterable[Mapping[str, Any]], since: float | None = None
    ) -> list[Json]:
        """Take the Events one watch (``scope``) holds now as seen; those last seen after ``since``
        (recording seconds: a resumed recording's end) are recorded once each."""
        out = []
        counts = self.counts.setdefault(scope, {})
        for event in events:
            uid = str((event.get("metadata") or {}).get("uid", ""))
            counts[uid] = _count(event)
            when = _when(event)
            if since is not None and when is not None and when - self.start > since:
                recorded = self._convert(event, when - self.start)
                if recorded is not None:
                    out.append(recorded)
        return out

    def observe(self, scope: str, events: Iterable[Mapping[str, Any]]) -> list[Json]:
        """The occurrences of the Events one watch holds that were not recorded yet."""
        out: list[Json] = []
        present: set[str] = set()
        counts = self.counts.setdefault(scope, {})
        for event in events:
            uid = str((event.get("metadata") or {}).get("uid", ""))
            present.add(uid)
            count = _count(event)
            new = count - counts.get(uid, 0)
            counts[uid] = max(count, counts.get(uid, 0))
            if new <= 0:
                continue
            when = _when(event)
            if when is None:
                continue
            recorded = self._convert(event, max(when - self.start, 0.0))
            if recorded is not None:
                out.extend([recorded] * new)
        for uid in set(counts) - present:  # expired (an hour, by default) or deleted
            del counts[uid]
        return out

    def _convert(self, event: Mapping[str, Any], t: float) -> Json | None:
        source = _source(event)
        if source is None or not self.keep(event):
            return None
        reason = str(event.get("reason", ""))
        message = str(event.get("message", ""))
        obj = _object(event)
        data: Json = {}
        scale_up = SCALE_UP_MESSAGE.match(message) if reason == "ScaledUpGroup" else None
        if scale_up is not None:
            data = {
                "group": scale_up.group(1) or scale_up.group(2),
                "from": int(scale_up.group(4)),
                "to": int(scale_up.group(3)),
            }
        elif obj.startswith("Node/"):
            node = obj.split("/", 1)[1]
            data = {"node": node}
            group = self.group_of_node(node)
            if group is not None:
                data["group"] = group
        elif reason == "SuccessfulRescale":
            size = _NEW_SIZE.match(message)
            if size is not None:
                data = {"to": int(size.group(1))}
        return {
            "t": round(t, 3),
            "source": source,
            "reason": reason,
            "object": obj,
            "message": message,
            "data": data,
        }
