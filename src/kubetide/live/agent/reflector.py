"""List, then watch, into an in-memory store; relist on 410 Gone, back off on other failures.

The minimal informer the agent needs (a general watch cache may replace it later). The store is keyed by
``namespace/name`` and replaced wholesale on every relist, so an object deleted while the watch was down
does not linger. One reflector per resource, each on its own daemon thread: a watch blocks in a read,
and a daemon thread lets the process exit on SIGTERM without waiting for the server to end the stream.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator

from kubetide.kube.failures import log_failure
from kubetide.live.agent.api import ApiError, Obj, WatchEvent

__all__ = ["Reflector", "Store", "object_key"]

log = logging.getLogger(__name__)

BACKOFF_INITIAL_S = 1.0
BACKOFF_MAX_S = 30.0


def object_key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name', '')}" if namespace else str(meta.get("name", ""))


class Store:
    """Objects by key, safe to read from the worker while the reflector writes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, Obj] = {}
        self.synced = threading.Event()  # set after the first successful list

    def replace(self, items: list[Obj]) -> None:
        with self._lock:
            self._items = {object_key(o): o for o in items}
        self.synced.set()

    def apply(self, kind: str, obj: Obj) -> None:
        """Apply a watch event, or an object the agent just wrote. A version older than the stored one
        is dropped: the agent stores what its own patches return, and the watch may still deliver the
        events before them (without this, the next round would redo a write it already made)."""
        key = object_key(obj)
        with self._lock:
            old = self._items.get(key)
            if old is not None and _version(obj) < _version(old):
                return
            if kind == "DELETED":
                self._items.pop(key, None)
            else:
                self._items[key] = obj

    def items(self) -> list[Obj]:
        with self._lock:
            return list(self._items.values())


def _version(obj: Obj) -> int:
    # resourceVersions are opaque by contract, but they are etcd revisions on every real API server.
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


class Reflector:
    """Keeps ``store`` in step with the server through ``lister`` and ``watcher``."""

    def __init__(
        self,
        name: str,
        lister: Callable[[], tuple[list[Obj], str]],
        watcher: Callable[[str], Iterator[WatchEvent]],
        store: Store,
        stop: threading.Event,
    ) -> None:
        self.name = name
        self._lister = lister
        self._watcher = watcher
        self._store = store
        self._stop = stop

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name=f"reflector-{self.name}", daemon=True)
        thread.start()
        return thread

    def run(self) -> None:
        backoff = BACKOFF_INITIAL_S
        while not self._stop.is_set():
            try:
                self.run_once()
                backoff = BACKOFF_INITIAL_S  # the stream ended without error: relist at once
            except ApiError as exc:
                if exc.code == 410:
                    log.info("%s watch expired (410 Gone); relisting", self.name)
                    continue
                log.warning("%s list/watch failed: %s; retrying in %.0fs", self.name, exc, backoff)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_S)
            except Exception as exc:  # a bad object or a client bug must not end the watch for good
                log_failure(log, f"{self.name} list/watch failed; retrying in {backoff:.0f}s", exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_S)

    def run_once(self) -> None:
        """One list and the watch that follows it, until the stream ends or fails."""
        items, resource_version = self._lister()
        self._store.replace(items)
        for kind, obj in self._watcher(resource_version):
            if self._stop.is_set():
                return
            if kind in ("ADDED", "MODIFIED", "DELETED"):
                self._store.apply(kind, obj)
