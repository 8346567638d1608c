"""A watch cache (client-go's informer) per resource: list, then watch from the list's version.

One daemon thread per cache keeps a dict of trimmed objects (:mod:`kubetide.kube.trim`) current:
list (paged, decoded with the resource's schema from :mod:`kubetide.kube.schema` so unread fields are
never built), then watch from the list's ``resourceVersion`` with bookmarks; on ``410 Gone`` (the
version fell out of etcd's window) list again; on a dropped connection, a 5xx or a timeout, list again
after a capped exponential backoff with jitter (client-go's reflector relists after a failed watch too).
Every failure is counted in ``kubetide_api_errors_total``; an outage is logged once, when it starts
(one line naming the cause; the traceback only at ``-v=4``), and once when the cache has listed again.

A failure makes the cache *unsynced* until that new list completes (:meth:`Informer.has_synced`): what
it holds may be missing every change of the outage, and the live loops skip rather than decide on it,
as CA runs only on synced informers.

Readers never block on the network: :meth:`Informer.views` converts objects to the cores' views
lazily and memoizes them per (key, resourceVersion), so a loop over an unchanged cluster costs dict
reads, and :attr:`Informer.version` (bumped on every change) lets callers cache what they derive. An
object that fails to convert is logged once per resourceVersion and skipped: one malformed object
never hides the others.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import httpx2
import msgspec

from kubetide.kube.discovery import ResourceKind
from kubetide.kube.failures import describe, log_failure
from kubetide.kube.gcpause import gc_paused
from kubetide.kube.index import OrderedIndex
from kubetide.kube.metrics import API_ERRORS
from kubetide.kube.rest import Backoff, KubeStatusError, Rest
from kubetide.kube.schema import WatchEvent, list_decoder, object_decoder
from kubetide.kube.trim import TRIMS, trim_metadata

__all__ = ["Informer", "object_key"]

log = logging.getLogger(__name__)
V = TypeVar("V")
Json = dict[str, Any]


def object_key(obj: Json) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


def _decode_lenient(decoder: Any, raw: Any) -> Any:
    """Decode with the cache's schema, or, when the object does not fit it (a BOOKMARK's empty Pod has
    ``"containers": null``; a newer server may add a shape the schema does not expect), as plain JSON.

    A schema error must never stop a watch: the watch would resume from the same resourceVersion and
    meet the same event forever. The plain object is trimmed like any other, and a view that cannot be
    built from it is skipped by :meth:`Informer.views`, as every malformed object is.
    """
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError:
        return msgspec.json.decode(raw)


def _rv(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


_STATUS: msgspec.json.Decoder[Any] = msgspec.json.Decoder()
# A rebuild that converts at least this many objects (a first conversion, not a watch event's) freezes
# what it built when it ends, as a list does (kubetide.kube.gcpause).
_FREEZE_AFTER = 1000
# Up to this many changed objects (or an eighth of the cache) the views are patched, not rebuilt.
_FEW_CHANGES = 64
_IN_PLACE, _MOVED = "in place", "moved"


def _view_of(entry: tuple[str, V]) -> V:
    return entry[1]


class _Gone(Exception):
    """The watched version is too old (410): list again."""


def _interrupt(response: httpx2.Response) -> None:
    """Wake a thread blocked reading ``response``: shut its socket down (closing the response from
    another thread does not: it waits for the read). Best effort; the thread is ending anyway."""
    with contextlib.suppress(Exception):
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
        else:
            response.close()


class Informer(Generic[V]):
    """The objects of one resource (optionally one namespace, or a label/field selector)."""

    def __init__(
        self,
        rest: Rest,
        kind: ResourceKind,
        convert: Callable[[Json], V],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        watch_timeout_s: float = 300.0,
        backoff: Backoff | None = None,
        index: Callable[[V], str | None] | None = None,
    ):
        self.rest, self.kind, self._convert = rest, kind, convert
        self._index = OrderedIndex(index) if index is not None else None
        self.namespace = namespace
        self._params: dict[str, str | int] = {}
        if label_selector:
            self._params["labelSelector"] = label_selector
        if field_selector:
            self._params["fieldSelector"] = field_selector
        self._page_size, self._watch_timeout = page_size, watch_timeout_s
        self._backoff = backoff or Backoff(base=0.8, cap=30.0)
        self._trim = TRIMS.get(kind.plural, trim_metadata)
        self._list_decoder = list_decoder(kind.plural)
        self._object_decoder = object_decoder(kind.plural)
        self._event_decoder = msgspec.json.Decoder(WatchEvent)
        self._lock = threading.Lock()
        self._store: dict[str, Json] = {}
        self._version = 0
        self._synced = threading.Event()
        self._broken_since: float | None = None  # monotonic time of the failure that unsynced the cache
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._response: httpx2.Response | None = None
        self._memo: dict[str, tuple[str, V]] = {}
        self._failed: dict[str, str] = {}  # key -> resourceVersion that failed to convert
        self._views: tuple[int, list[V], Mapping[str, Sequence[V]]] = (-1, [], {})
        self._rebuilding = threading.Lock()  # one rebuild of the views at a time
        # Keys changed since the views were last built, with how (in place, or added at the store's
        # end); None: the store was replaced (a list), so every object is looked at again.
        self._changes: dict[str, str] | None = None
        self._resource_version = ""  # the last list's, then each applied event's and bookmark's

    @property
    def name(self) -> str:
        return self.kind.plural if self.namespace is None else f"{self.kind.plural}@{self.namespace}"

    # -- reading ---------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """Bumped on every change of the store: equal versions mean equal contents."""
        return self._version

    @property
    def resource_version(self) -> str:
        """The server's resourceVersion the cache has caught up to: its last list's, then each watch
        event's and bookmark's ("" before the first list). A caller that knows the server's current
        version can wait for the cache to show everything up to it."""
        return self._resource_version

    def has_synced(self) -> bool:
        """Listed, and no watch failure since the last list: the contents are the server's."""
        return self._synced.is_set()

    def wait_synced(self, timeout: float) -> bool:
        return self._synced.wait(timeout)

    def get(self, key: str) -> Json | None:
        with self._lock:
            return self._store.get(key)

    def objects(self) -> list[Json]:
        with self._lock:
            return list(self._store.values())

    def views(self) -> list[V]:
        """Every object converted; objects that fail to convert are skipped (logged once per version).

        After a few watch events only the changed objects are converted and put in place (in the
        store's order, as a full rebuild gives them: a modified object keeps its place, a new one
        comes last); a list, or many changes at once, rebuilds from every object (memoized)."""
        return self.views_and_index()[0]

    def views_and_index(self) -> tuple[list[V], Mapping[str, Sequence[V]]]:
        """The views and, of the same version, the views grouped by the cache's ``index`` key
        (:class:`~kubetide.kube.index.OrderedIndex`; empty without one)."""
        version, cached, groups = self._views
        if version == self._version:
            return cached, groups
        with self._rebuilding:
            with self._lock:
                version, changes = self._version, self._changes
                self._changes = {}
                if changes is not None and len(changes) <= max(_FEW_CHANGES, len(self._store) // 8):
                    changed = {key: self._store.get(key) for key in changes}
                    moved = sum(1 for k, how in changes.items() if how == _MOVED and changed[k] is not None)
                    tail = list(itertools.islice(reversed(self._store), moved))[::-1]
                    if self._patch(changes, changed, tail):
                        out = list(map(_view_of, self._memo.values()))
                        groups = self._index.groups() if self._index is not None else {}
                        self._views = (version, out, groups)
                        return out, groups
                items = list(self._store.items())
            # A first conversion of a whole cache builds long-lived objects: frozen (see gc_paused).
            with gc_paused(freeze=len(items) - len(self._memo) >= _FREEZE_AFTER):
                self._rebuild(version, items)
            built = self._views
        return built[1], built[2]

    def _patch(self, changes: dict[str, str], changed: dict[str, Json | None], tail: list[str]) -> bool:
        """Bring the memo (the views in the store's order) up to date with ``changes``; False when only
        a full rebuild can tell the order (an object that failed before converts now). Runs under the
        store's lock, so ``changed`` and ``tail`` (the last keys of the store) are the store's now."""
        memo = self._memo
        if set(tail) != {key for key, how in changes.items() if how == _MOVED and changed[key] is not None}:
            return False  # the keys added since are the store's last ones; anything else: rebuild
        for key, how in changes.items():
            if how == _IN_PLACE and key not in memo and changed[key] is not None:
                converted = self._convert_one(key, changed[key])  # type: ignore[arg-type]
                if converted is not None:
                    return False  # it failed before, so it has no place in the memo: full rebuild
        index = self._index
        if index is not None:
            index.begin()
        for key, how in changes.items():
            obj = changed[key]
            before = memo.get(key)
            if obj is not None and how == _IN_PLACE:
                converted = self._convert_one(key, obj)
            else:  # deleted, or added again (put in place below, from the store's tail)
                converted = None
                if obj is None:
                    self._failed.pop(key, None)
            if converted is None:
                memo.pop(key, None)
            else:
                memo[key] = converted
            if index is not None and (before is not None or converted is not None):
                index.update(
                    key,
                    None if before is None else before[1],
                    None if converted is None else converted[1],
                    moved=False,
                )
        for key in tail:
            converted = self._convert_one(key, changed[key])  # type: ignore[arg-type]
            if converted is not None:
                memo[key] = converted
                if index is not None:
                    index.update(key, None, converted[1], moved=True)
        return True

    def _convert_one(self, key: str, obj: Json) -> tuple[str, V] | None:
        """The memoized view of ``obj``, or None (logged once per resourceVersion) when it fails."""
        rv = _rv(obj)
        hit = self._memo.get(key)
        if hit is not None and hit[0] == rv:
            return hit
        if self._failed.get(key) == rv:
            return None  # known bad at this version: not parsed (nor logged) again
        try:
            view = self._convert(obj)
        except Exception as exc:
            self._failed[key] = rv
            log.warning("%s %s (resourceVersion %s) skipped: %s", self.kind.kind, key, rv, exc)
            return None
        return rv, view

    def _rebuild(self, version: int, items: list[tuple[str, Json]]) -> None:
        memo: dict[str, tuple[str, V]] = {}
        for key, obj in items:
            converted = self._convert_one(key, obj)
            if converted is not None:
                memo[key] = converted
        self._memo = memo
        if self._failed:
            present = {key for key, _ in items}
            self._failed = {k: v for k, v in self._failed.items() if k in present}
        out = list(map(_view_of, memo.values()))
        groups: Mapping[str, Sequence[V]] = {}
        if self._index is not None:
            self._index.rebuild(dict(zip(memo, out, strict=True)))
            groups = self._index.groups()
        self._views = (version, out, groups)

    # -- running ---------------------------------------------------------------------------------

    def start(self) -> Informer[V]:
        self._thread = threading.Thread(target=self.run, name=f"informer-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread: an open watch is closed so the thread ends at once."""
        self._stop.set()
        response = self._response
        if response is not None:
            _interrupt(response)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def run(self) -> None:
        """List and watch until :meth:`stop`."""
        rv: str | None = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    rv = self._list()
                rv = self._watch(rv)
                self._backoff.reset()
            except _Gone:
                log.info("%s: watch version expired, listing again", self.name)
                rv = None
            except Exception as exc:
                if self._stop.is_set():
                    break
                if not isinstance(exc, KubeStatusError):  # KubeStatusError is counted where raised
                    API_ERRORS.labels(resource=self.kind.plural, reason=type(exc).__name__).inc()
                rv = None  # what the outage changed is known only from a new list
                self._failed_once(exc, self._backoff.next())

    def _failed_once(self, exc: Exception, delay: float) -> None:
        """A failure: the cache is unsynced until its next list. The first failure of an outage is
        logged as a warning, the retries only at debug level (the recovery is logged by the list)."""
        self._synced.clear()
        if self._broken_since is None:
            self._broken_since = time.monotonic()
            log_failure(log, f"{self.name}: watch broken, listing again in {delay:.1f}s", exc)
        else:
            log.debug("%s: still failing (%s); listing again in %.1fs", self.name, describe(exc), delay)
        self._stop.wait(delay)

    def _list(self) -> str:
        with gc_paused(freeze=True):
            return self._list_all()

    def _list_all(self) -> str:
        path = self.kind.path(self.namespace)
        store: dict[str, Json] = {}
        params: dict[str, str | int] = {**self._params, "limit": self._page_size}
        while True:
            try:
                page = _decode_lenient(
                    self._list_decoder, self.rest.request_bytes("GET", path, params=params, timeout=60.0)
                )
            except KubeStatusError as exc:
                if exc.status != 410 or "continue" not in params:
                    raise
                # The continue token expired mid-list: one unpaged list, as client-go falls back to.
                store, params = {}, dict(self._params)
                continue
            for obj in page.get("items") or []:
                store[object_key(obj)] = self._trim(obj)
            meta = page.get("metadata") or {}
            if not meta.get("continue"):
                rv = str(meta.get("resourceVersion", ""))
                break
            params = {**self._params, "limit": self._page_size, "continue": meta["continue"]}
        with self._lock:
            self._store = store
            self._version += 1
            self._changes = None
        self._resource_version = rv
        self._synced.set()
        if self._broken_since is not None:
            log.info(
                "%s: synced again after %.1fs: listed %d objects at resourceVersion %s",
                self.name,
                time.monotonic() - self._broken_since,
                len(store),
                rv,
            )
            self._broken_since = None
        else:
            log.info("%s: listed %d objects at resourceVersion %s", self.name, len(store), rv)
        return rv

    def _watch(self, rv: str) -> str:
        # client-go spreads reconnects: a timeout between 1 and 2 times the minimum.
        timeout_s = int(self._watch_timeout * (1 + random.random()))
        params = {
            **self._params,
            "resourceVersion": rv,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": timeout_s,
        }
        try:
            for line in self.rest.watch(
                self.kind.path(self.namespace), params, timeout_s + 30.0, on_open=self._opened
            ):
                event = self._event_decoder.decode(line)
                if event.type == "ERROR":
                    obj = _STATUS.decode(event.object)
                else:
                    obj = _decode_lenient(self._object_decoder, event.object)
                rv = self._apply({"type": event.type, "object": obj}, rv)
                self._resource_version = rv
                if self._stop.is_set():
                    break
        finally:
            self._response = None
        return rv

    def _opened(self, response: httpx2.Response) -> None:
        self._response = response

    def _apply(self, event: Json, rv: str) -> str:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            code = int(obj.get("code", 0))
            if code == 410:
                raise _Gone
            raise KubeStatusError(code, str(obj.get("reason", "WatchError")), str(obj.get("message", "")))
        new_rv = _rv(obj) or rv
        if kind == "BOOKMARK":
            return new_rv
        key = object_key(obj)
        with self._lock:
            if kind == "DELETED":
                self._store.pop(key, None)
                how = _IN_PLACE
            elif kind in ("ADDED", "MODIFIED"):
                how = _IN_PLACE if key in self._store else _MOVED  # a new key goes to the end
                self._store[key] = self._trim(obj)
            else:
                return rv
            self._version += 1
            if self._changes is not None and self._changes.get(key) != _MOVED:
                self._changes[key] = how
        return new_rv
