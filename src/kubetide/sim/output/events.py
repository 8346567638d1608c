"""The simulator's event log: what happened, when, who said so; written as ``events.jsonl`` (contract §10.2).

Every component of a run (the scenario's actions, the simulated cloud and kubelets, the scheduler, the
controllers and the autoscalers) appends here. A big run emits ~10^6 events (a ``Scheduled`` per pod), so
``emit`` only validates the source, counts, and appends a tuple; JSON is built once, at the end.

Events are expected in time order (the engine runs in time order). One emitted late does not corrupt the
log: the log notes it and sorts stably (same-time events keep their emission order) before anyone reads.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "CONTRACT_DATA_KEYS",
    "SOURCES",
    "Event",
    "EventContractError",
    "EventLog",
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


class EventLog:
    """Append-only, time-ordered events with counts by (source, reason).

    ``strict=True`` also checks each contract reason's data keys (for tests of the simulator: a run in
    production should not die over a missing key). The ``data`` dict is kept by reference: do not
    mutate it after emitting.
    """

    def __init__(self, *, strict: bool = False) -> None:
        self._events: list[Event] = []
        self._counts: Counter[tuple[str, str]] = Counter()
        self._last_t = float("-inf")
        self._sorted = True
        self._strict = strict

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
        t = float(t)
        if t < self._last_t:
            self._sorted = False
        else:
            self._last_t = t
        payload = _EMPTY if data is None else data
        if self._strict:
            _check_data(source, reason, payload)
        self._events.append(Event(t, str(source), reason, object, message, payload))
        self._counts[(str(source), reason)] += 1

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    @property
    def events(self) -> list[Event]:
        """All events in time order (same-time events in emission order)."""
        if not self._sorted:
            self._events.sort(key=lambda e: e.t)  # list.sort is stable
            self._sorted = True
            self._last_t = self._events[-1].t
        return self._events

    def counts(self) -> dict[tuple[str, str], int]:
        """How many events each (source, reason) emitted."""
        return dict(self._counts)

    def count(self, source: str, reason: str) -> int:
        return self._counts[(source, reason)]

    def by_source(self) -> dict[str, int]:
        totals: Counter[str] = Counter()
        for (source, _), n in self._counts.items():
            totals[source] += n
        return {s: totals[s] for s in SOURCES if totals[s]}

    def write_jsonl(self, path: str | Path) -> None:
        """One JSON object per line with exactly the contract's fields, in time order."""
        encode = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
        with open(path, "w", encoding="utf-8") as out:
            # Writing in chunks keeps memory flat without a syscall per line.
            chunk: list[str] = []
            for event in self.events:
                chunk.append(encode(event.to_json()))
                if len(chunk) >= 4096:
                    out.write("\n".join(chunk) + "\n")
                    chunk.clear()
            if chunk:
                out.write("\n".join(chunk) + "\n")


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
