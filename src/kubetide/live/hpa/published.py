"""What the live HPA controller publishes about its decisions: each HPA's last sync, and the memory it
decides with.

- ``/debug/hpa`` on ``--address`` (:meth:`PublishedState.page`): per HPA, what its last sync decided
  (``hpa explain --json``'s report, made by the same function), when, when the HPA is next due, and
  the memory the controller holds now (``hpa explain --state``'s format: the published memory, what
  later syncs can read). ``?hpa=NAMESPACE/NAME`` answers for one HPA.
- At ``-v=4``, one compact block per sync (``render_compact`` of the same report).
- The memory ConfigMap (:mod:`.memory_configmap`): written at most once per sync period, one write for
  every HPA, and only when something changed; read back at the start of each leadership term (a
  restart, a standby taking over), so the controller decides with the memory the last leader had, at
  most one period old. kube-controller-manager keeps this memory in process only and forgets it on a
  restart: right after one, a scale-down its stabilization window held happens at once.

The loop thread calls :meth:`PublishedState.restore` and :meth:`PublishedState.observe`; the HTTP
thread reads the entries, which ``observe`` replaces whole and never changes.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver, Synced
from kubetide.hpa.explain import render_compact, report
from kubetide.hpa.memory import document, published, rfc3339
from kubetide.hpa.state import Remembered
from kubetide.live.hpa.memory_configmap import MemoryStoreError, StoredMemory, data_key

__all__ = ["MemoryStore", "PublishedState"]

log = logging.getLogger("kubetide.hpa")


class MemoryStore(Protocol):
    """Where the memory is kept: the ConfigMap (guarded), or a test's double."""

    @property
    def where(self) -> str: ...

    def read(self) -> StoredMemory | None:
        """The stored memory, None when there is none; raises MemoryStoreError."""
        ...

    def write(self, data: Mapping[str, str], written_at: str) -> None:
        """Replace the stored memory (data key -> JSON document); raises MemoryStoreError."""
        ...


@dataclass(frozen=True, slots=True)
class _Entry:
    """One HPA as the page shows it; the memory both as text (the ConfigMap's) and as a document."""

    uid: str
    synced: Synced | None  # None: restored, not synced by this process yet
    at: float | None  # when it was last synced
    next_due: float | None
    memory_text: str | None  # None: nothing remembered
    memory: dict[str, Any] | None


class PublishedState:
    def __init__(
        self,
        config: HPAConfig,
        store: MemoryStore | None,
        *,
        mode: str = "acting",
        interval: float | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.mode = mode  # acting | dry-run | shadow
        self.interval = config.sync_period if interval is None else interval
        self._entries: dict[str, _Entry] = {}
        self._written: dict[str, str] | None = None
        self._last_write = -math.inf
        self._written_at: float | None = None
        self._store_error: str | None = None

    # --- the loop's side ---------------------------------------------------------------------------

    def restore(self, driver: HPADriver) -> None:
        """A new leadership term: start ``driver`` afresh with the stored memory (or none)."""
        driver.restart()
        self._entries, self._written, self._last_write = {}, None, -math.inf
        store = self.store
        if store is None:
            return
        try:
            stored = store.read()
        except MemoryStoreError as exc:
            log.warning("cannot restore the HPAs' memory (%s): starting without it, as upstream does", exc)
            return
        if stored is None:
            log.info("no HPA memory to restore (%s does not exist yet)", store.where)
            return
        for problem in stored.problems:
            log.warning("HPA memory not restored: %s", problem)
        entries = {}
        for key, (uid, state) in stored.memories.items():
            driver.restore(key, uid, state)
            text = _text(document(Remembered.of(state), uid))
            entries[key] = _Entry(uid, None, None, None, text, json.loads(text))
        self._entries = entries
        when = f", written {rfc3339(stored.written_at)}" if stored.written_at is not None else ""
        count = f"{len(entries)} HPA" + ("" if len(entries) == 1 else "s")
        log.info("restored the memory of %s from %s%s", count, store.where, when)

    def observe(self, synced: Sequence[Synced], driver: HPADriver, now: float) -> None:
        """After a tick: each synced HPA's decision and memory, logged and published."""
        entries = dict(self._entries)
        debug = log.isEnabledFor(logging.DEBUG)
        for done in synced:
            key, decision = done.key, done.decision
            memory = driver.controller.memory(key)
            previous = entries.get(key)
            text: str | None = None
            uid = previous.uid if previous is not None else ""
            if decision is not None:
                uid = decision.hpa.uid
                if memory is not None:
                    text = _text(document(published(memory, decision.hpa, self.config, now), uid))
            elif memory is not None and previous is not None:
                text = previous.memory_text  # unchanged since: the sync broke before deciding
            entries[key] = _Entry(
                uid, done, now, driver.next_due(key), text, json.loads(text) if text is not None else None
            )
            if debug:
                _log_sync(done)
        listed = set(driver.keys())
        self._entries = {k: e for k, e in entries.items() if k in listed}
        self._write(now)

    def _write(self, now: float) -> None:
        store = self.store
        if store is None or now - self._last_write < self.interval:
            return
        data = {
            data_key(k): e.memory_text for k, e in sorted(self._entries.items()) if e.memory_text is not None
        }
        if data == self._written:
            return
        self._last_write = now  # after a failure too: tried again a period later, not every tick
        try:
            store.write(data, rfc3339(now))
        except MemoryStoreError as exc:
            if str(exc) != self._store_error:
                log.warning("the HPAs' memory is not kept (%s); it is tried again every period", exc)
            self._store_error = str(exc)
            return
        if self._store_error is not None:
            log.info("the HPAs' memory is kept again in %s", store.where)
        self._store_error, self._written, self._written_at = None, data, now

    # --- the HTTP side -----------------------------------------------------------------------------

    def page(self, query: Mapping[str, str]) -> tuple[int, Any]:
        """``/debug/hpa``: every HPA, or ``?hpa=NAMESPACE/NAME``'s alone."""
        entries = self._entries
        wanted = query.get("hpa")
        if wanted is not None:
            entry = entries.get(wanted)
            if entry is None:
                known = ", ".join(sorted(entries)) or "none"
                return 404, {"error": f"no HPA {wanted} in the last listing (known: {known})"}
            return 200, {"hpa": wanted, **_hpa_page(entry)}
        store = self.store
        return 200, {
            "component": "horizontal-pod-autoscaler",
            "mode": self.mode,
            "memoryStore": None
            if store is None
            else {
                "where": store.where,
                "writtenAt": rfc3339(self._written_at) if self._written_at is not None else None,
                "error": self._store_error,
            },
            "hpas": {key: _hpa_page(entry) for key, entry in sorted(entries.items())},
        }


def _hpa_page(entry: _Entry) -> dict[str, Any]:
    synced = entry.synced
    decision = synced.decision if synced is not None else None
    result = synced.result if synced is not None else None
    return {
        "uid": entry.uid,
        "lastSync": rfc3339(entry.at) if entry.at is not None else None,
        "nextSync": rfc3339(entry.next_due) if entry.next_due is not None else None,
        "problem": synced.problem if synced is not None else None,
        "decision": report(decision, result) if decision is not None and result is not None else None,
        "memory": entry.memory,
    }


def _log_sync(done: Synced) -> None:
    if done.decision is not None and done.result is not None:
        rep = report(done.decision, done.result)
        log.debug("%s", render_compact(rep), extra={"hpa": done.key, "decision": rep})
    else:
        log.debug("%s: no decision: %s", done.key, done.problem, extra={"hpa": done.key})


def _text(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, separators=(",", ":"))
