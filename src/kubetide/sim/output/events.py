"""The simulator's event log: what happened, when, who said so; written as ``events.jsonl`` (contract §10.2).

Every component of a run (the scenario's actions, the simulated cloud and kubelets, the scheduler, the
controllers and the autoscalers) appends here. A big run emits ~10^6 events (a ``Scheduled`` per pod), so
``emit`` only validates the source, counts, and appends a tuple; JSON is built once, at the end.

Events are expected in time order (the engine runs in time order). One emitted late does not corrupt the
log: the log notes it and sorts stably (same-time events keep their emission order) before anyone reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from enum import StrEnum
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "CONTRACT_DATA_KEYS",
    "SOURCES",
    "Event",
    "EventContractError",
    "EventLog",
    "EventTuple",
    "Source",
]


class Source(StrEnum):
    """Who emitted an event; the contract's closed set."""

    SCENARIO = "scenario"
    CLOUD = "cloud"
    KUBELET = "kubelet"
    SCHEDULER = "scheduler"
    CONTROLLER = "controller"
    HPA = "hpa"
    CLUSTER_AUTOSCALER = "cluster-autoscaler"
    ESCALATOR = "escalator"


SOURCES: tuple[str, ...] = tuple(s.value for s in Source)
_SOURCE_SET = frozenset(SOURCES)

# The contract's table (§10.2): for each (source, reason), the data keys it must carry. Each inner tuple
# is a set of alternatives, one of which must be present ("node (or instance)", "groups or reasons").
_G, _N, _I = ("group",), ("node",), ("instance",)
CONTRACT_DATA_KEYS: Mapping[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("cloud", "InstanceCreated"): (_G, _I),
    ("cloud", "InstanceFailed"): (_G, _I),
    ("cloud", "InstanceTerminated"): (_G, _I, ("reason",)),
    ("kubelet", "NodeRegistered"): (_G, _N, _I),
    ("kubelet", "NodeReady"): (_G, _N, _I),
    ("kubelet", "NodeNotReady"): (_G, _N, _I),
    ("scheduler", "Scheduled"): (_N,),
    ("scheduler", "FailedScheduling"): (),
    ("hpa", "SuccessfulRescale"): (("from",), ("to",)),
    ("cluster-autoscaler", "ScaledUpGroup"): (_G, ("from",), ("to",)),
    ("cluster-autoscaler", "TriggeredScaleUp"): (("groups", "reasons"),),
    ("cluster-autoscaler", "NotTriggerScaleUp"): (("groups", "reasons"),),
    ("cluster-autoscaler", "FailedToScaleUpGroup"): (_G,),
    ("cluster-autoscaler", "ScaleUpTimedOut"): (_G,),
    ("cluster-autoscaler", "ScaleUpFailed"): (_G,),
    ("cluster-autoscaler", "NodeGroupBackoff"): (_G, ("until",)),
    ("cluster-autoscaler", "ScaleDown"): (_G, ("node", "instance")),
    ("cluster-autoscaler", "ScaleDownEmpty"): (_G, ("node", "instance")),
    ("cluster-autoscaler", "DeleteUnregistered"): (_G, ("node", "instance")),
    ("cluster-autoscaler", "DeleteCreatedWithError"): (_G, ("node", "instance")),
    ("cluster-autoscaler", "FixNodeGroupSize"): (_G, ("node", "instance")),
    ("cluster-autoscaler", "NodeTemplateMismatch"): (_G, ("resource",), ("template",), ("observed",)),
    # kubetide's own (README, "Where kubetide decides differently"): these carry what a user filters on.
    ("cluster-autoscaler", "UnregisteredInstanceKept"): (_G, _I),
    ("cluster-autoscaler", "UnremovableNode"): (_G, _N, ("reason",)),
    ("cluster-autoscaler", "NodeWithoutProviderID"): (_N,),
    ("escalator", "EscalatorScaleUp"): (_G, ("delta",)),
    ("escalator", "EscalatorTaint"): (_G, ("nodes",)),
    ("escalator", "EscalatorUntaint"): (_G, ("nodes",)),
    ("escalator", "EscalatorDelete"): (_G, ("nodes",)),
    ("scenario", "ActionApplied"): (),
    ("scenario", "FaultStarted"): (),
    ("scenario", "FaultEnded"): (),
    ("scenario", "AutoscalerRestarted"): (),
}
_EMPTY: dict[str, Any] = {}


class EventContractError(ValueError):
    """An event the contract does not allow: an unknown source, or (strict logs) missing data keys."""


class Event(NamedTuple):
    """One line of ``events.jsonl``. A tuple, so a million of them stay cheap."""

    t: float
    source: str
    reason: str
    object: str
    message: str
    data: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "source": self.source,
            "reason": self.reason,
            "object": self.object,
            "message": self.message,
            "data": dict(self.data),
        }


# What the log stores per event: Event's fields as a plain tuple (building a NamedTuple costs 3x more,
# and a big run emits a million of these). An ``Event`` is one too, so readers take either.
EventTuple = tuple[float, str, str, str, str, Mapping[str, Any]]


class EventLog:
    """Append-only, time-ordered events with counts by (source, reason).

    ``strict=True`` also checks each contract reason's data keys (for tests of the simulator: a run in
    production should not die over a missing key). The ``data`` dict is kept by reference: do not
    mutate it after emitting.
    """

    def __init__(self, *, strict: bool = False) -> None:
        self._rows: list[EventTuple] = []
        self._last_t = float("-inf")
        self._sorted = True
        self._strict = strict
        # Counted lazily, from where the last count stopped: emit stays a check and an append.
        self._counts: dict[tuple[str, str], int] = {}
        self._counted = 0

    def emit(
        self,
        t: float,
        source: str,
        reason: str,
        object: str,  # the contract's field name, shadowing the builtin on purpose
        message: str,
        data: dict[str, Any] | None = None,
    ) -> None:
        if source not in _SOURCE_SET:
            raise EventContractError(f"unknown event source {source!r}; one of {', '.join(SOURCES)}")
        if t < self._last_t:
            self._sorted = False
        else:
            self._last_t = t
        if data is None:
            data = _EMPTY
        if self._strict:
            _check_data(source, reason, data)
        self._rows.append((float(t), source, reason, object, message, data))

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Event]:
        return map(Event._make, self._ordered())

    @property
    def events(self) -> list[Event]:
        """All events in time order (same-time events in emission order). Builds a named tuple per
        event: on big logs prefer ``rows()``."""
        return list(self)

    def rows(self) -> list[EventTuple]:
        """All events in time order as plain tuples ``(t, source, reason, object, message, data)``;
        the log's own list: do not modify it."""
        return self._ordered()

    def _ordered(self) -> list[EventTuple]:
        if not self._sorted:
            self.counts()  # count first: the lazy count goes by position, which sorting changes
            self._rows.sort(key=_time)  # list.sort is stable: same-time events keep emission order
            self._sorted = True
            self._last_t = self._rows[-1][0]
        return self._rows

    def counts(self) -> dict[tuple[str, str], int]:
        """How many events each (source, reason) emitted."""
        counts, rows = self._counts, self._rows
        for i in range(self._counted, len(rows)):
            key = (str(rows[i][1]), rows[i][2])
            counts[key] = counts.get(key, 0) + 1
        self._counted = len(rows)
        return dict(counts)

    def count(self, source: str, reason: str) -> int:
        return self.counts().get((source, reason), 0)

    def by_source(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for (source, _), n in self.counts().items():
            totals[source] = totals.get(source, 0) + n
        return {s: totals[s] for s in SOURCES if s in totals}

    def write_jsonl(self, path: str | Path) -> None:
        """One JSON object per line with exactly the contract's fields, in time order."""
        encode_data = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
        text: dict[str, str] = {}  # sources and reasons repeat: encode each once

        def encoded(value: str) -> str:
            out = text.get(value)
            if out is None:
                out = text[value] = _encode_string(str(value))
            return out

        # repr of a finite float is JSON ("612.0", "1e-05"); NaN and infinities (t - t != 0) are not: null.
        with open(path, "w", encoding="utf-8") as out:
            chunk: list[str] = []  # written in chunks: flat memory, no syscall per line
            for t, source, reason, obj, message, data in self._ordered():
                chunk.append(
                    f'{{"t": {repr(t) if t - t == 0 else "null"}, "source": {encoded(source)}, "reason": {encoded(reason)}, '
                    f'"object": {_encode_string(obj)}, "message": {_encode_string(message)}, '
                    f'"data": {encode_data(data) if data else "{}"}}}'
                )
                if len(chunk) >= 4096:
                    out.write("\n".join(chunk) + "\n")
                    chunk.clear()
            if chunk:
                out.write("\n".join(chunk) + "\n")


def _time(row: EventTuple) -> float:
    return row[0]


_encode_string = encode_basestring  # C-accelerated, quotes included, non-ASCII kept as is


def _check_data(source: str, reason: str, data: Mapping[str, Any]) -> None:
    required = CONTRACT_DATA_KEYS.get((source, reason))
    if required is None:
        return
    for alternatives in required:
        if not any(key in data for key in alternatives):
            raise EventContractError(
                f"{source} {reason} event needs data key {' or '.join(map(repr, alternatives))}; "
                f"got {sorted(data)}"
            )


def _json_default(value: object) -> object:
    # numpy scalars and tuples-of-things sneak into data dicts; write them as the plain values they are.
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)
