"""Which of the controller's memory a later decision can still read, and that memory as a document.

Upstream's controller keeps each HPA's recent recommendations and scale events in process memory
only. kubetide's live controller publishes them (``hpa explain --cluster`` explains with them) and
restores them when it restarts or another replica takes the lead. :func:`published` keeps exactly
the entries a later sync can read while the HPA's spec and the controller's flags stay as they are:

- a recommendation older than the longest stabilization window is never read again (the windows
  only move forward);
- a recommendation with a newer (or as new) one at least as high is never the highest of a window
  that holds it (the newer one is in every window it is in), and one with a newer one at least as low
  never the lowest: it goes when neither of what is read of it is (the lowest only with a scale-up
  stabilization window, which only ``behavior`` has);
- a scale event older than the longest policy period of either direction is never counted again
  (each direction's limit counts both directions' events over its own policies' periods).

So a controller given the published memory decides as the one that kept all of it (property-tested in
``tests/hpa/test_memory.py``), and the published memory is small: one recommendation per HPA in a
steady state. An HPA never synced keeps ``recommendations`` None (its first sync seeds the current
count), which is not the same as an empty list (every entry too old: nothing seeds).

:func:`document` and :func:`read_document`: the memory as JSON, ``hpa explain --state``'s format
with RFC 3339 times to the microsecond, plus the HPA's ``uid`` when known (a memory is never given to
another HPA that took the name of a deleted one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.state import HPAState, Recommendation, Remembered, ScaleEvent
from kubetide.hpa.with_behavior import longest_period
from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.fields import Node
from kubetide.model.hpa import HPA, default_scale_down_rules, default_scale_up_rules

__all__ = [
    "DEFAULT_CONFIGMAP",
    "DEFAULT_CONFIGMAP_NAMESPACE",
    "DOCUMENT_KEYS",
    "document",
    "published",
    "read_document",
    "rfc3339",
]

# Where ``kubetide run hpa`` keeps the published memory unless told otherwise, and ``hpa explain
# --cluster`` looks for it: deploy/'s namespace.
DEFAULT_CONFIGMAP = "kubetide-hpa-memory"
DEFAULT_CONFIGMAP_NAMESPACE = "kubetide"

T = TypeVar("T")

DOCUMENT_KEYS = ("uid", "recommendations", "scaleUpEvents", "scaleDownEvents")


def published(state: HPAState, hpa: HPA, config: HPAConfig, now: float) -> Remembered:
    """What of ``state`` a sync of ``hpa`` after ``now`` can read (see the module's docstring)."""
    recs = state.recommendations
    lows = _reads_lows(hpa)
    kept = None if recs is None else _recommendations(recs, now - _longest_window(hpa, config), lows)
    horizon = now - _longest_period(hpa)
    return Remembered(
        kept,
        tuple(e for e in state.scale_up_events if e.timestamp >= horizon),
        tuple(e for e in state.scale_down_events if e.timestamp >= horizon),
    )


def _longest_window(hpa: HPA, config: HPAConfig) -> float:
    """The longest stabilization window a sync of ``hpa`` reads recommendations over."""
    behavior = hpa.behavior
    if behavior is None:
        return config.downscale_stabilization
    up = default_scale_up_rules(behavior.scale_up).stabilization_window_seconds or 0
    down = default_scale_down_rules(behavior.scale_down).stabilization_window_seconds
    return max(float(up), config.downscale_stabilization if down is None else float(down))


def _reads_lows(hpa: HPA) -> bool:
    """Whether a sync reads the lowest recent recommendation: a scale-up stabilization window."""
    behavior = hpa.behavior
    return behavior is not None and bool(
        default_scale_up_rules(behavior.scale_up).stabilization_window_seconds
    )


def _longest_period(hpa: HPA) -> float:
    behavior = hpa.behavior
    up = default_scale_up_rules(behavior.scale_up if behavior is not None else None)
    down = default_scale_down_rules(behavior.scale_down if behavior is not None else None)
    return float(max(longest_period(up), longest_period(down)))


def _recommendations(
    recs: Sequence[Recommendation], horizon: float, lows: bool
) -> tuple[Recommendation, ...]:
    """The entries no older than ``horizon`` that are the highest (or, with ``lows``, the lowest) from
    their time on, oldest first."""
    ordered = sorted((r for r in recs if r.timestamp >= horizon), key=lambda r: r.timestamp)
    kept: list[Recommendation] = []
    highest = lowest = None  # over the entries after this one in time order
    for rec in reversed(ordered):
        replicas = rec.replicas
        if highest is None or lowest is None:
            highest = lowest = replicas
            kept.append(rec)
            continue
        if replicas > highest or (lows and replicas < lowest):
            kept.append(rec)
        highest, lowest = max(highest, replicas), min(lowest, replicas)
    kept.reverse()
    return tuple(kept)


# --- as a document ---------------------------------------------------------------------------------


def rfc3339(t: float) -> str:
    """A time to the microsecond, as a Go ``time.Time`` marshals one (UTC)."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def document(memory: Remembered, uid: str = "") -> dict[str, Any]:
    """The memory in ``--state``'s format (``uid`` left out when empty)."""
    out: dict[str, Any] = {"uid": uid} if uid else {}
    if memory.recommendations is not None:
        out["recommendations"] = [
            {"replicas": r.replicas, "timestamp": rfc3339(r.timestamp)} for r in memory.recommendations
        ]
    out["scaleUpEvents"] = [_event(e) for e in memory.scale_up_events]
    out["scaleDownEvents"] = [_event(e) for e in memory.scale_down_events]
    return out


def _event(event: ScaleEvent) -> dict[str, Any]:
    return {"replicaChange": event.replica_change, "timestamp": rfc3339(event.timestamp)}


def read_document(data: Any, source: str) -> tuple[str, HPAState]:
    """(the HPA's uid, "" when not given; the memory) of a document in ``--state``'s format:
    ``{uid?, recommendations?: [{replicas, timestamp}], scaleUpEvents?: [{replicaChange, timestamp}],
    scaleDownEvents?: [...]}``. Without ``recommendations`` the HPA was never synced. Raises
    ManifestError naming every wrong field."""
    root = Node(data, source)
    keys = root.mapping()  # raises when the document is not a mapping at all
    known = ", ".join(DOCUMENT_KEYS)
    problems = [
        FieldError(f"{source}.{k}", f"unknown field (known: {known})")
        for k in sorted(set(keys) - set(DOCUMENT_KEYS), key=str)
    ]

    def entries(name: str, make: Callable[[Node], T]) -> list[T]:
        out: list[T] = []
        try:
            nodes = root.get(name).list()
        except ManifestError as exc:
            problems.extend(exc.errors)
            return out
        for node in nodes:
            try:
                out.append(make(node))
            except ManifestError as exc:
                problems.extend(exc.errors)
        return out

    def event(node: Node) -> ScaleEvent:
        return ScaleEvent(node.get("replicaChange").int(minimum=1), node.get("timestamp").time())

    def recommendation(node: Node) -> Recommendation:
        return Recommendation(node.get("replicas").int(minimum=0), node.get("timestamp").time())

    uid = ""
    try:
        uid = root.get("uid").str("")
    except ManifestError as exc:
        problems.extend(exc.errors)
    recs = entries("recommendations", recommendation) if root.has("recommendations") else None
    up = entries("scaleUpEvents", event)
    down = entries("scaleDownEvents", event)
    if problems:
        raise ManifestError(problems)
    return uid, HPAState(recs, up, down)
