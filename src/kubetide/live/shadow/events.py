"""When the running autoscaler acted, as its own Events say: the times a shadow gives its actions.

A shadow lists the Events of the running autoscaler's component (``source.component``: CA's
``cluster-autoscaler``, kube-controller-manager's ``horizontal-pod-autoscaler``; kubetide's own write
the same) at every loop and reads each new occurrence (an Event whose ``count`` grew happened again,
at its last timestamp; those present at the first look happened before the shadow and are skipped:
:class:`~kubetide.live.record.events.EventTracker`). What they say, in CA 1.31's words:

- ``ScaledUpGroup`` ``Scale-up: setting group X size to N instead of M (max: K)`` (on the status
  ConfigMap; ``core/scaleup/orchestrator/executor.go``, ``executeScaleUp``): group X scaled up then;
- ``ScaleDown`` ``marked the node as toBeDeleted/unschedulable`` on the Node
  (``core/scaledown/actuation/actuator.go``, ``taintNode``), ``ScaleDownEmpty`` ``Scale-down: removing
  empty node "N"`` and ``ScaleDown`` ``Scale-down: removing node N, utilization: ...`` (the status
  ConfigMap; ``deleteAsyncEmpty``, ``deleteAsyncDrain``): node N's removal decided then;
- ``ScaleDown`` ``Scale-down: node N removed with drain``, ``ScaleDownEmpty`` ``Scale-down: empty node N
  removed`` (``delete_in_batch.go``, ``RegisterAndRecordSuccessfulScaleDownEvent``) and ``ScaleDown``
  ``nodes removed by cluster autoscaler`` on the Node: node N gone, if nothing earlier said when;
- ``TriggeredScaleUp`` ``pod triggered scale-up: [{X 0->1 (max: 3)}]`` on a pod
  (``core/static_autoscaler.go`` via ``EventingScaleUpStatusProcessor``): which pods a scale-up was for;
- kube-controller-manager's ``SuccessfulRescale`` ``New size: N; reason: R`` on an HPA
  (``pkg/controller/podautoscaler/horizontal.go``, ``reconcileAutoscaler``): the HPA rescaled to N then.

Matching goes by reason and message, whatever object the Event is on (kubetide's CA puts its
``Scale-down: removing ...`` Events on the Node). An Event that cannot be listed leaves the times to
the fallbacks (the taint, the status ConfigMap, the loop), said once in the log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.live.record.events import SCALE_UP_MESSAGE, EventTracker

__all__ = [
    "CAEventTimes",
    "EventLister",
    "HPARescale",
    "RunningEvents",
    "ca_event_times",
    "event_lister",
    "hpa_rescales",
]

log = logging.getLogger("kubetide.shadow")

# Lists the Events of one component (their JSON objects); raises when the API server cannot.
EventLister = Callable[[], Iterable[Mapping[str, Any]]]

_DECIDED = (
    re.compile(r'^Scale-down: removing empty node "?([^",\s]+)"?'),
    re.compile(r"^Scale-down: removing node ([^,\s]+),"),
)
_REMOVED = (
    re.compile(r"^Scale-down: node (\S+) removed with drain"),
    re.compile(r"^Scale-down: empty node (\S+) removed"),
)
_TRIGGERED = re.compile(r"\{(\S+) (\d+)->(\d+) \(max: \d+\)\}")
_NEW_SIZE = re.compile(r"^New size: (\d+); reason: (.*)$", re.S)


@dataclass(frozen=True, slots=True)
class HPARescale:
    at: float
    size: int
    reason: str


@dataclass
class CAEventTimes:
    """What CA's Events said since the last look: when each group was scaled up, when each node's
    removal was decided (else when it was gone), and the pods each group's scale-up was for."""

    scale_ups: dict[str, float] = field(default_factory=dict)
    removals: dict[str, float] = field(default_factory=dict)
    triggered_by: dict[str, list[str]] = field(default_factory=dict)


def _node_of(obj: str) -> str | None:
    return obj.split("/", 1)[1] if obj.startswith("Node/") else None


def ca_event_times(events: Iterable[Mapping[str, Any]]) -> CAEventTimes:
    """The times in CA's Events (``EventTracker`` occurrences: ``t``, ``reason``, ``object``,
    ``message``), the earliest of each kind per group or node."""
    out = CAEventTimes()
    removed: dict[str, float] = {}
    for e in events:
        reason, message, at, obj = str(e["reason"]), str(e["message"]), float(e["t"]), str(e["object"])
        if reason == "ScaledUpGroup" and (m := SCALE_UP_MESSAGE.match(message)) is not None:
            group = m.group(1) or m.group(2)
            out.scale_ups[group] = min(at, out.scale_ups.get(group, at))
        elif reason == "TriggeredScaleUp" and obj.startswith("Pod/"):
            pod = obj.split("/", 1)[1]
            for group, _, _ in _TRIGGERED.findall(message):
                pods = out.triggered_by.setdefault(group, [])
                if pod not in pods:
                    pods.append(pod)
        elif reason in ("ScaleDown", "ScaleDownEmpty"):
            node = _decided_node(message, obj)
            if node is not None:
                out.removals[node] = min(at, out.removals.get(node, at))
                continue
            node = _removed_node(message, obj)
            if node is not None:
                removed[node] = min(at, removed.get(node, at))
    for node, at in removed.items():
        out.removals.setdefault(node, at)
    return out


def _decided_node(message: str, obj: str) -> str | None:
    return _node_named(message, obj, "marked the node as toBeDeleted/unschedulable", _DECIDED)


def _removed_node(message: str, obj: str) -> str | None:
    return _node_named(message, obj, "nodes removed by cluster autoscaler", _REMOVED)


def _node_named(
    message: str, obj: str, on_the_node: str, patterns: tuple[re.Pattern[str], ...]
) -> str | None:
    """The node an Event names: the Node it is on when its message is ``on_the_node``, else the one
    its message names by one of ``patterns``."""
    if message == on_the_node:
        return _node_of(obj)
    for pattern in patterns:
        if (m := pattern.match(message)) is not None:
            return m.group(1)
    return None


def hpa_rescales(events: Iterable[Mapping[str, Any]]) -> dict[str, HPARescale]:
    """Each HPA's (``namespace/name``) latest ``SuccessfulRescale`` among ``events``."""
    out: dict[str, HPARescale] = {}
    for e in events:
        obj = str(e["object"])
        if e["reason"] != "SuccessfulRescale" or not obj.startswith("HorizontalPodAutoscaler/"):
            continue
        m = _NEW_SIZE.match(str(e["message"]))
        if m is None:
            continue
        key, at = obj.split("/", 1)[1], float(e["t"])
        if key not in out or at >= out[key].at:
            out[key] = HPARescale(at, int(m.group(1)), m.group(2).strip())
    return out


class RunningEvents:
    """The new occurrences of one component's Events at each look."""

    def __init__(self, lister: EventLister, what: str) -> None:
        self.lister = lister
        self.what = what
        self._tracker = EventTracker(0.0, lambda node: None)
        self._started = False
        self._failing = False

    def new(self) -> list[dict[str, Any]]:
        """The occurrences since the last call (none at the first: they are older than the shadow)."""
        try:
            listed = list(self.lister())
        except Exception as exc:  # the API server, a forbidden list: the fallbacks give the times
            if not self._failing:
                log.warning("cannot list %s's Events (times from the cluster's objects): %s", self.what, exc)
            self._failing = True
            return []
        if self._failing:
            log.info("listing %s's Events again", self.what)
        self._failing = False
        if not self._started:
            self._started = True
            self._tracker.begin("events", listed)
            return []
        return self._tracker.observe("events", listed)


def event_lister(rest: Any, component: str) -> EventLister:
    """The core/v1 Events of ``component`` in every namespace (a ``source`` field selector)."""

    def lister() -> Iterable[Mapping[str, Any]]:
        body: Mapping[str, Any] = rest.request(
            "GET", "/api/v1/events", params={"fieldSelector": f"source={component}"}
        )
        items = body.get("items") or []
        return [i for i in items if isinstance(i, dict)]

    return lister
