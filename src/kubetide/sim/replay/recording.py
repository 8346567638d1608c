"""Reading a recorded day: the samples and autoscaler events ``kubetide record`` wrote beside a scenario.

Two JSON-lines files, appended while recording (so a crash may cut the last line short: it is an
error naming the file and line, never dropped silently):

- samples, one a line at every sampling step: ``{"t": 60, "nodes": {"general": 2}, "replicas":
  {"Deployment/default/web": 4}, "ready": {...}, "pending_pods": 1, "pending_pod_seconds": 35.0}``:
  Ready nodes per node group, desired and Ready replicas per HPA-scaled workload, pods not bound to a
  node now, and the pending pod-seconds so far (``t`` in seconds from the recording's start);
- events, in the simulator's ``events.jsonl`` shape (``t``, ``source``, ``reason``, ``object``,
  ``message``, ``data``): the autoscalers' Events as the cluster recorded them.

A series absent from a sample (a group or workload that did not exist yet) is NaN there.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

__all__ = ["RecordedDay", "RecordedEvent", "RecordingError", "read_recording", "recorded_day"]

FloatArray = npt.NDArray[np.float64]
_SERIES = ("nodes", "replicas", "ready")
_COUNTS = ("pending_pods", "pending_pod_seconds")


class RecordingError(ValueError):
    """A recording file that cannot be read; ``field`` is the spec field to blame (samples or events)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class RecordedEvent:
    t: float
    source: str
    reason: str
    object: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordedDay:
    """The recorded series over ``t`` (one entry per sample, in time order) and events."""

    t: FloatArray
    series: Mapping[str, FloatArray]  # "nodes:<group>", "replicas:<key>", "ready:<key>", "pending_pods", ...
    events: Sequence[RecordedEvent] = ()

    def column(self, name: str) -> FloatArray | None:
        return self.series.get(name)

    def names(self, prefix: str) -> list[str]:
        """The series of one kind, by what follows ``prefix:`` (groups for ``nodes``), in first-seen order."""
        return [name.split(":", 1)[1] for name in self.series if name.startswith(prefix + ":")]

    @property
    def pending_pod_seconds(self) -> float:
        column = self.series.get("pending_pod_seconds")
        if column is None or not len(column):
            return 0.0
        finite = column[np.isfinite(column)]
        return float(finite[-1]) if len(finite) else 0.0


def _lines(path: Path, shown: str, field_name: str) -> list[tuple[int, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        detail = (
            "no such file" if isinstance(exc, FileNotFoundError) else getattr(exc, "strerror", None) or exc
        )
        raise RecordingError(field_name, f"cannot read {shown!r}: {detail}") from None
    out = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line)))
        except ValueError:
            torn = number == len(lines) and not text.endswith("\n")
            cut = " (cut short: resume the recording to repair it)" if torn else ""
            raise RecordingError(field_name, f"{shown} line {number}: not JSON{cut}") from None
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _samples(path: Path, shown: str) -> tuple[FloatArray, dict[str, FloatArray]]:
    rows = _lines(path, shown, "samples")
    times: list[float] = []
    columns: dict[str, list[float]] = {}
    for number, row in rows:
        t = _number(row.get("t")) if isinstance(row, dict) else None
        if t is None or t < 0:
            raise RecordingError("samples", f'{shown} line {number}: needs "t", seconds from the start')
        if times and t < times[-1]:
            raise RecordingError("samples", f"{shown} line {number}: t goes back ({t:g} < {times[-1]:g})")
        index = len(times)
        times.append(t)
        values: dict[str, float] = {}
        for kind in _SERIES:
            entries = row.get(kind) or {}
            if not isinstance(entries, dict):
                raise RecordingError("samples", f"{shown} line {number}: {kind} must be a mapping")
            for name, value in entries.items():
                number_value = _number(value)
                if number_value is None:
                    raise RecordingError(
                        "samples", f"{shown} line {number}: {kind}[{name!r}] must be a number"
                    )
                values[f"{kind}:{name}"] = number_value
        for name in _COUNTS:
            if name in row:
                number_value = _number(row[name])
                if number_value is None:
                    raise RecordingError("samples", f"{shown} line {number}: {name} must be a number")
                values[name] = number_value
        for name, value in values.items():
            column = columns.setdefault(name, [math.nan] * index)
            column.append(value)
        for column in columns.values():
            if len(column) == index:  # absent from this sample
                column.append(math.nan)
    return np.asarray(times, dtype=np.float64), {
        k: np.asarray(v, dtype=np.float64) for k, v in columns.items()
    }


def _events(path: Path, shown: str) -> list[RecordedEvent]:
    out = []
    for number, row in _lines(path, shown, "events"):
        t = _number(row.get("t")) if isinstance(row, dict) else None
        if t is None or not all(isinstance(row.get(k), str) for k in ("source", "reason", "object")):
            raise RecordingError("events", f"{shown} line {number}: needs t, source, reason and object")
        data = row.get("data") or {}
        out.append(
            RecordedEvent(
                t,
                row["source"],
                row["reason"],
                row["object"],
                str(row.get("message", "")),
                data if isinstance(data, dict) else {},
            )
        )
    out.sort(key=lambda e: e.t)  # appended as the API server's timestamps came: nearly in order
    return out


def read_recording(base_dir: Path, samples: str, events: str) -> RecordedDay:
    """The day recorded in ``samples`` and ``events`` (paths relative to ``base_dir``)."""
    t, series = _samples(base_dir / samples, samples)
    return RecordedDay(t, series, tuple(_events(base_dir / events, events)))


class _Recorded(Protocol):
    @property
    def base_dir(self) -> Path: ...

    @property
    def spec(self) -> Any: ...


def recorded_day(scenario: _Recorded) -> RecordedDay | None:
    """The day a scenario's ``spec.recording`` names (checked when it loaded); None without one."""
    recording = scenario.spec.recording
    if recording is None:
        return None
    return read_recording(scenario.base_dir, recording.samples, recording.events)
