"""Kubernetes Events written as client-go's recorder writes them, aggregated as it aggregates them.

An event names its involved object (kind, namespace, name, uid when the caches know it), its source
component and host, first and last timestamps and a count. The same event (object, type, reason,
message) again within 10 minutes is not a new object: the existing one gets ``count + 1`` and a new
``lastTimestamp`` through a strategic merge patch, as client-go's ``EventCorrelator`` does, so a loop
that reports the same thing every 10 s writes one Event, not 360 an hour.

Best effort, as the recorder: nothing raises to the caller; an event that cannot be written is logged
and counted in ``kubetide_events_dropped_total``. Events are written in dry runs too (they are the
point of a dry run).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubetide.kube.cache import Informer
from kubetide.kube.metrics import EVENTS_DROPPED
from kubetide.kube.rest import STRATEGIC_PATCH, KubeStatusError, Rest, retrying

__all__ = ["AGGREGATION_WINDOW_S", "EventRecorder", "ObjectRef", "parse_ref", "uid_lookup"]

log = logging.getLogger(__name__)
AGGREGATION_WINDOW_S = 600.0
_MAX_REMEMBERED = 4096
_API_VERSIONS = {"Pod": "v1", "Node": "v1", "ConfigMap": "v1", "Namespace": "v1"}
UidLookup = Callable[[str, str, str], str | None]


@dataclass(frozen=True, slots=True)
class ObjectRef:
    kind: str
    namespace: str  # "" for cluster-scoped objects
    name: str


def parse_ref(obj: str) -> ObjectRef:
    """``Kind/name`` (cluster-scoped) or ``Kind/namespace/name``; Kind may be ``Kind.version.group``."""
    parts = obj.split("/")
    if len(parts) == 2:
        return ObjectRef(parts[0], "", parts[1])
    if len(parts) == 3:
        return ObjectRef(parts[0], parts[1], parts[2])
    raise ValueError(f"object reference {obj!r} is not Kind/[namespace/]name")


def uid_lookup(*informers: Informer[Any]) -> UidLookup:
    """The uid of an object from whichever cache holds its kind (None when unknown)."""
    by_kind = {i.kind.kind: i for i in informers}

    def lookup(kind: str, namespace: str, name: str) -> str | None:
        informer = by_kind.get(kind)
        if informer is None:
            return None
        obj = informer.get(f"{namespace}/{name}" if namespace else name)
        return None if obj is None else (obj.get("metadata") or {}).get("uid")

    return lookup


def _timestamp(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Seen:
    namespace: str
    name: str
    count: int
    last: float


class EventRecorder:
    """Writes core/v1 Events for one component (``source.component``)."""

    def __init__(
        self,
        rest: Rest,
        component: str,
        *,
        host: str | None = None,
        uid_of: UidLookup | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        api_versions: Mapping[str, str] | None = None,
    ):
        self.rest, self.component = rest, component
        # involvedObject.apiVersion by kind, beyond the core kinds (e.g. kubetide's HPA resource).
        self._api_versions = {**_API_VERSIONS, **(api_versions or {})}
        self.host = socket.gethostname() if host is None else host
        self._uid_of, self._clock, self._sleep = uid_of, clock, sleep
        self._seen: dict[tuple[str, ...], _Seen] = {}
        self._lock = threading.Lock()

    def emit(self, type_: str, reason: str, obj: str, message: str) -> None:
        try:
            self._emit(type_, reason, parse_ref(obj), message)
        except Exception as exc:
            EVENTS_DROPPED.labels(component=self.component).inc()
            log.warning("event %s %s on %s dropped: %s", type_, reason, obj, exc)

    def _emit(self, type_: str, reason: str, ref: ObjectRef, message: str) -> None:
        now = self._clock()
        key = (ref.kind, ref.namespace, ref.name, type_, reason, message)
        with self._lock:
            seen = self._seen.get(key)
        if seen is not None and now - seen.last <= AGGREGATION_WINDOW_S:
            patch = {"count": seen.count + 1, "lastTimestamp": _timestamp(now), "message": message}
            path = f"/api/v1/namespaces/{seen.namespace}/events/{seen.name}"
            try:
                self._call(lambda: self.rest.request("PATCH", path, body=patch, content_type=STRATEGIC_PATCH))
                with self._lock:
                    seen.count, seen.last = seen.count + 1, now
                return
            except KubeStatusError as exc:
                if exc.status != 404:
                    raise
                # The event expired (the API server keeps events an hour): write a new one.
        namespace = ref.namespace or "default"  # client-go puts cluster-scoped objects' events there
        name = f"{ref.name}.{int(now * 1e9):x}"
        # ``Kind.version.group`` names an object of another API version than the kind's usual one
        # (a standard HPA beside kubetide's own: both are HorizontalPodAutoscalers).
        kind, _, qualified = ref.kind.partition(".")
        version, _, group = qualified.partition(".")
        involved: dict[str, Any] = {
            "kind": kind,
            "name": ref.name,
            "apiVersion": f"{group}/{version}" if group else self._api_versions.get(ref.kind, "v1"),
        }
        if ref.namespace:
            involved["namespace"] = ref.namespace
        uid = self._uid_of(ref.kind, ref.namespace, ref.name) if self._uid_of else None
        if uid:
            involved["uid"] = uid
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": self.component, "host": self.host},
            "firstTimestamp": _timestamp(now),
            "lastTimestamp": _timestamp(now),
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        self._call(lambda: self.rest.request("POST", f"/api/v1/namespaces/{namespace}/events", body=event))
        with self._lock:
            if len(self._seen) >= _MAX_REMEMBERED:  # forget the oldest (client-go keeps an LRU of 4096)
                del self._seen[min(self._seen, key=lambda k: self._seen[k].last)]
            self._seen[key] = _Seen(namespace, name, 1, now)

    def _call(self, fn: Callable[[], Any]) -> Any:
        return retrying(fn, attempts=3, sleep=self._sleep)
