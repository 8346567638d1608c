"""How close a replay came to the day it replays: the figures ``kubetide replay compare`` prints.

Both sides are read from files: the recorded day (:mod:`.recording`) and a simulation's output
directory (``timeline.csv``, ``events.jsonl``, ``summary.json``). Compared, with the tolerances the
docs/simulator.md states (and :class:`Tolerances` holds):

- node count per group at every minute (the last sample at or before it): within one node;
- the groups scaled up and the groups scaled down: the same on both sides;
- the number of scale-ups and of scale-downs, per group: equal. A scale-up is one ``ScaledUpGroup``
  "Scale-up: setting group ..." event (CA records a second one once the size is set; it is not
  counted) or one ``EscalatorScaleUp``; a scale-down is one node removed, "Scale-down: removing ..."
  (``ScaleDown`` or ``ScaleDownEmpty``), or one ``EscalatorDelete`` per node;
- desired replicas per HPA-scaled workload at every minute: within one;
- pending pod-seconds: within 20 % of the recorded figure (of whichever is larger when the recorded
  one is 0).

Pure once read: :func:`compare_day` takes the two sides and returns a :class:`Fidelity`, whose
``checks()`` say which criterion held and ``render()`` gives the text the command prints.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kubetide.sim.replay.recording import RecordedDay, RecordedEvent

__all__ = [
    "Check",
    "Fidelity",
    "ScaleCounts",
    "SeriesFit",
    "SimulatedDay",
    "Tolerances",
    "compare_day",
    "read_simulated",
    "scale_counts",
]

FloatArray = npt.NDArray[np.float64]
_SCALE_UP_MESSAGE = "Scale-up: setting group "
_SCALE_DOWN_MESSAGE = "Scale-down: removing "
_SIDES = ("recorded", "simulated")


@dataclass(frozen=True)
class Tolerances:
    nodes: float = 1.0  # per group, at every minute
    replicas: float = 1.0  # per HPA-scaled workload, at every minute
    pending_ratio: float = 0.2  # of the recorded pending pod-seconds


@dataclass(frozen=True)
class SimulatedDay:
    """What a simulation's output directory holds that the comparison reads."""

    t: FloatArray
    series: Mapping[str, FloatArray]
    events: Sequence[RecordedEvent]
    pending_pod_seconds: float
    duration: float


@dataclass(frozen=True)
class SeriesFit:
    """One series minute by minute: how many minutes, the largest difference and when, and how many
    minutes were beyond the tolerance."""

    name: str
    minutes: int
    max_difference: float
    at: float | None  # the first minute with the largest difference (seconds)
    minutes_off: int

    def ok(self) -> bool:
        return self.minutes_off == 0


@dataclass(frozen=True)
class ScaleCounts:
    group: str
    recorded_ups: int = 0
    simulated_ups: int = 0
    recorded_downs: int = 0
    simulated_downs: int = 0


@dataclass(frozen=True)
class Check:
    criterion: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class Fidelity:
    minutes: int
    nodes: tuple[SeriesFit, ...]
    replicas: tuple[SeriesFit, ...]
    scaling: tuple[ScaleCounts, ...]
    rescales: Mapping[str, tuple[int, int]]  # HPA object -> (recorded, simulated) rescales
    pending_recorded: float
    pending_simulated: float
    tolerances: Tolerances = field(default_factory=Tolerances)

    @property
    def pending_difference(self) -> float:
        """Relative difference of the pending pod-seconds (0 when both are 0)."""
        scale = self.pending_recorded or max(self.pending_simulated, 0.0)
        return abs(self.pending_simulated - self.pending_recorded) / scale if scale else 0.0

    def checks(self) -> list[Check]:
        tol = self.tolerances
        up = {side: {c.group for c in self.scaling if getattr(c, f"{side}_ups")} for side in _SIDES}
        down = {side: {c.group for c in self.scaling if getattr(c, f"{side}_downs")} for side in _SIDES}
        off_nodes = [
            f"{f.name} ({f.minutes_off} min, up to {f.max_difference:g})" for f in self.nodes if not f.ok()
        ]
        off_replicas = [
            f"{f.name} ({f.minutes_off} min, up to {f.max_difference:g})" for f in self.replicas if not f.ok()
        ]
        counts_off = [
            f"{c.group} ({c.recorded_ups}/{c.simulated_ups} up, {c.recorded_downs}/{c.simulated_downs} down)"
            for c in self.scaling
            if (c.recorded_ups, c.recorded_downs) != (c.simulated_ups, c.simulated_downs)
        ]
        return [
            Check(
                f"node count per group at every minute within {tol.nodes:g}",
                not off_nodes,
                "; ".join(off_nodes) or f"{len(self.nodes)} group(s), {self.minutes} minutes",
            ),
            Check(
                "the same groups scaled up and down",
                up["recorded"] == up["simulated"] and down["recorded"] == down["simulated"],
                f"up: recorded {_names(up['recorded'])}, simulated {_names(up['simulated'])}; "
                f"down: recorded {_names(down['recorded'])}, simulated {_names(down['simulated'])}",
            ),
            Check(
                "the same number of scale-ups and scale-downs",
                not counts_off,
                "; ".join(counts_off)
                or f"{sum(c.recorded_ups for c in self.scaling)} up, "
                f"{sum(c.recorded_downs for c in self.scaling)} down",
            ),
            Check(
                f"replicas per HPA at every minute within {tol.replicas:g}",
                not off_replicas,
                "; ".join(off_replicas) or f"{len(self.replicas)} workload(s), {self.minutes} minutes",
            ),
            Check(
                f"pending pod-seconds within {tol.pending_ratio:.0%}",
                self.pending_difference <= tol.pending_ratio + 1e-9,
                f"recorded {self.pending_recorded:.1f}, simulated {self.pending_simulated:.1f} "
                f"({self.pending_difference:.1%})",
            ),
        ]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks())

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["rescales"] = {k: {"recorded": r, "simulated": s} for k, (r, s) in self.rescales.items()}
        out["pending_difference"] = round(self.pending_difference, 4)
        out["checks"] = [asdict(check) for check in self.checks()]
        out["ok"] = self.ok
        return out

    def render(self) -> str:
        lines = [f"Compared minute by minute over {self.minutes} minutes (recorded vs simulated)", ""]
        lines.append("Nodes per group        max diff  minutes off")
        for fit in self.nodes:
            lines.append(f"  {fit.name:<20} {fit.max_difference:>8g}  {fit.minutes_off:>11}{_when(fit)}")
        lines.append("")
        lines.append("Scaling per group      ups (rec/sim)  downs (rec/sim)")
        for c in self.scaling:
            ups, downs = f"{c.recorded_ups}/{c.simulated_ups}", f"{c.recorded_downs}/{c.simulated_downs}"
            lines.append(f"  {c.group:<20} {ups:>13}  {downs:>15}")
        if self.replicas:
            lines.append("")
            lines.append("Replicas per HPA target                max diff  minutes off")
            for fit in self.replicas:
                lines.append(f"  {fit.name:<36} {fit.max_difference:>8g}  {fit.minutes_off:>11}{_when(fit)}")
        if self.rescales:
            lines.append("")
            lines.append("HPA rescales                           recorded  simulated")
            for hpa, (recorded, simulated) in self.rescales.items():
                lines.append(f"  {hpa:<36} {recorded:>8}  {simulated:>9}")
        lines.append("")
        lines.append(
            f"Pending pod-seconds: recorded {self.pending_recorded:.1f}, simulated {self.pending_simulated:.1f} "
            f"({self.pending_difference:.1%})"
        )
        lines.append("")
        for check in self.checks():
            lines.append(f"{'ok  ' if check.ok else 'OFF '} {check.criterion}: {check.detail}")
        return "\n".join(lines)


def _names(groups: Iterable[str]) -> str:
    return ", ".join(sorted(groups)) or "none"


def _when(fit: SeriesFit) -> str:
    return f"  (first at {fit.at / 60:g} min)" if fit.at is not None and fit.max_difference > 0 else ""


def _at_minutes(t: FloatArray, y: FloatArray, minutes: FloatArray) -> FloatArray:
    """The value of a step series at each minute: the last sample at or before it (NaN before the first)."""
    if not len(t):
        return np.full(len(minutes), math.nan)
    index = np.searchsorted(t, minutes, side="right") - 1
    out = np.where(index >= 0, y[np.clip(index, 0, None)], math.nan)
    return np.asarray(out, dtype=np.float64)


def _fit(
    name: str, minutes: FloatArray, recorded: FloatArray, simulated: FloatArray, tolerance: float
) -> SeriesFit:
    both = np.isfinite(recorded) & np.isfinite(simulated)
    if not both.any():
        return SeriesFit(name, 0, 0.0, None, 0)
    difference = np.abs(recorded[both] - simulated[both])
    worst = int(np.argmax(difference))
    return SeriesFit(
        name,
        int(both.sum()),
        float(difference[worst]),
        float(minutes[both][worst]),
        int((difference > tolerance + 1e-9).sum()),
    )


def scale_counts(events: Iterable[RecordedEvent]) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """(scale-ups, scale-downs, HPA rescales) by group, group and HPA object, from events."""
    ups: dict[str, int] = {}
    downs: dict[str, int] = {}
    rescales: dict[str, int] = {}
    for event in events:
        group = str(event.data.get("group", ""))
        scaled_up = event.reason == "ScaledUpGroup" and event.message.startswith(_SCALE_UP_MESSAGE)
        if scaled_up or event.reason == "EscalatorScaleUp":
            ups[group] = ups.get(group, 0) + 1
        elif event.reason in ("ScaleDown", "ScaleDownEmpty") and event.message.startswith(
            _SCALE_DOWN_MESSAGE
        ):
            downs[group] = downs.get(group, 0) + 1
        elif event.reason == "EscalatorDelete":
            nodes = event.data.get("nodes")
            downs[group] = downs.get(group, 0) + (len(nodes) if isinstance(nodes, list) else 1)
        elif event.reason == "SuccessfulRescale":
            rescales[event.object] = rescales.get(event.object, 0) + 1
    return ups, downs, rescales


def compare_day(
    recorded: RecordedDay, simulated: SimulatedDay, tolerances: Tolerances | None = None
) -> Fidelity:
    """The figures of ``simulated`` against ``recorded``, over the minutes both cover."""
    tol = tolerances or Tolerances()
    end = min(float(recorded.t[-1]) if len(recorded.t) else 0.0, simulated.duration)
    minutes = np.arange(0.0, math.floor(end / 60.0) * 60.0 + 1.0, 60.0)
    fits: dict[str, list[SeriesFit]] = {"nodes": [], "replicas": []}
    for kind in fits:
        for name in recorded.names(kind):
            column = f"{kind}:{name}"
            rec = _at_minutes(recorded.t, recorded.series[column], minutes)
            sim_y = simulated.series.get(column)
            sim = (
                _at_minutes(simulated.t, sim_y, minutes)
                if sim_y is not None
                else np.full(len(minutes), np.nan)
            )
            if sim_y is None:  # the replay has no such group or workload: every minute is off
                fits[kind].append(SeriesFit(name, len(minutes), math.inf, 0.0, len(minutes)))
                continue
            fits[kind].append(_fit(name, minutes, rec, sim, tol.nodes if kind == "nodes" else tol.replicas))
    rec_ups, rec_downs, rec_rescales = scale_counts(e for e in recorded.events if e.t <= end)
    sim_ups, sim_downs, sim_rescales = scale_counts(e for e in simulated.events if e.t <= end)
    groups = sorted({*recorded.names("nodes"), *rec_ups, *rec_downs, *sim_ups, *sim_downs} - {""})
    scaling = tuple(
        ScaleCounts(g, rec_ups.get(g, 0), sim_ups.get(g, 0), rec_downs.get(g, 0), sim_downs.get(g, 0))
        for g in groups
    )
    hpas = sorted({*rec_rescales, *sim_rescales})
    rescales = {h: (rec_rescales.get(h, 0), sim_rescales.get(h, 0)) for h in hpas}
    return Fidelity(
        len(minutes),
        tuple(fits["nodes"]),
        tuple(fits["replicas"]),
        scaling,
        rescales,
        recorded.pending_pod_seconds,
        simulated.pending_pod_seconds,
        tol,
    )


class SimulationOutputError(ValueError):
    """A simulation output directory that cannot be read."""


def read_simulated(directory: Path) -> SimulatedDay:
    """``timeline.csv``, ``events.jsonl`` and ``summary.json`` of ``kubetide simulate --output-dir``."""
    try:
        with (directory / "timeline.csv").open(newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
        event_lines = (directory / "events.jsonl").read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError) as exc:
        raise SimulationOutputError(f"cannot read the simulation's outputs in {directory}: {exc}") from None
    header, data = rows[0], rows[1:]
    columns = {name: np.array([_cell(row[i]) for row in data]) for i, name in enumerate(header)}
    events = []
    for line in event_lines:
        if line.strip():
            e = json.loads(line)
            events.append(
                RecordedEvent(
                    float(e["t"]),
                    e["source"],
                    e["reason"],
                    e["object"],
                    e.get("message", ""),
                    e.get("data") or {},
                )
            )
    return SimulatedDay(
        columns.get("t", np.array([])),
        columns,
        tuple(events),
        float((summary.get("pods") or {}).get("pending_pod_seconds", 0.0)),
        float(summary.get("simulated_seconds", 0.0)),
    )


def _cell(text: str) -> float:
    return float(text) if text else math.nan
