"""The run's summary: the values of ``summary.json`` (contract §10.1) and how to compute the trickier ones.

The simulator fills a ``Summary`` at the end of a run; ``to_json`` gives the contract's structure (every
required key, plus whatever the simulator put in the ``extra`` mappings), ``write_summary_json`` writes
it, and ``summary.text.render_summary`` turns it into the tables printed on stdout.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from kubetide.cluster.loop.world import LoopStats

__all__ = [
    "ClusterAutoscalerSummary",
    "EscalatorSummary",
    "GroupSummary",
    "HpaSummary",
    "NodesSummary",
    "PodsSummary",
    "Summary",
    "TimeToSchedule",
    "WorkloadSummary",
    "time_to_schedule",
    "write_summary_json",
]


@dataclass
class TimeToSchedule:
    p50: float = 0.0
    p95: float = 0.0
    p99: float = 0.0
    max: float = 0.0


def time_to_schedule(durations: Iterable[float]) -> TimeToSchedule:
    """Percentiles of per-pod creation-to-binding seconds (pods never bound counted to the end of the run).

    Nearest-rank percentiles (numpy's ``inverted_cdf``): each is a duration some pod really waited, the
    smallest that at least that share of pods did not exceed. Interpolating would report a p95 of 47 s
    when pods waited either 0 s or 95 s, which no pod did. No pods: all zero.
    """
    values = np.fromiter(durations, dtype=np.float64)
    if values.size == 0:
        return TimeToSchedule()
    if np.isnan(values).any():
        raise ValueError("time-to-schedule durations must not be NaN")
    p50, p95, p99 = np.percentile(values, [50, 95, 99], method="inverted_cdf")
    return TimeToSchedule(p50=float(p50), p95=float(p95), p99=float(p99), max=float(values.max()))


@dataclass
class PodsSummary:
    pending_pod_seconds: float = 0.0
    max_pending: int = 0
    time_to_schedule_seconds: TimeToSchedule = field(default_factory=TimeToSchedule)
    unschedulable_at_end: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class GroupSummary:
    final: int = 0
    max: int = 0
    node_seconds: float = 0.0
    cost: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class NodesSummary:
    node_seconds: float = 0.0
    cost: float = 0.0
    max: int = 0
    final: int = 0
    by_group: dict[str, GroupSummary] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class WorkloadSummary:
    min_replicas: int = 0
    max_replicas: int = 0
    final_replicas: int = 0
    scale_events: int = 0
    overloaded_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ClusterAutoscalerSummary(LoopStats):
    """The loop driver's totals (:class:`LoopStats`: its counts are this block's keys, so the two cannot
    drift) and whether CA ran. Without CA the block is the contract's counts, all zero."""

    # Whether it ran: the tables and the report show it only then (the JSON block is the contract's).
    enabled: bool = field(default=False, metadata={"json": False})
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of_run(cls, totals: LoopStats, loops: int) -> ClusterAutoscalerSummary:
        """The block of a run in which CA ran ``loops`` loops and counted ``totals``."""
        counts = {count.name: getattr(totals, count.name) for count in fields(LoopStats)}
        return cls(**counts, enabled=True, extra={"loops": loops})


@dataclass
class HpaSummary:
    rescales: int = 0
    enabled: bool = field(default=False, metadata={"json": False})
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class EscalatorSummary:
    scale_ups: int = 0
    nodes_added: int = 0
    nodes_tainted: int = 0
    nodes_removed: int = 0
    # Whether the batch autoscaler ran: the tables and the report show it only then. Not in the JSON,
    # whose contract requires the block (all zero when it did not run).
    enabled: bool = field(default=False, metadata={"json": False})
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Summary:
    """Everything ``summary.json`` holds. ``extra`` mappings (here and on each part) add keys beside the
    contract's; they may not replace one."""

    scenario: str
    seed: int
    simulated_seconds: float
    wall_seconds: float = 0.0
    pods: PodsSummary = field(default_factory=PodsSummary)
    nodes: NodesSummary = field(default_factory=NodesSummary)
    workloads: dict[str, WorkloadSummary] = field(default_factory=dict)
    cluster_autoscaler: ClusterAutoscalerSummary = field(default_factory=ClusterAutoscalerSummary)
    hpa: HpaSummary = field(default_factory=HpaSummary)
    escalator: EscalatorSummary = field(default_factory=EscalatorSummary)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The contract's structure, as plain JSON values."""
        pods = _part(self.pods, time_to_schedule_seconds=asdict(self.pods.time_to_schedule_seconds))
        nodes = _part(self.nodes, by_group={name: _part(g) for name, g in self.nodes.by_group.items()})
        return _merge(
            {
                "scenario": self.scenario,
                "seed": self.seed,
                "simulated_seconds": self.simulated_seconds,
                "wall_seconds": self.wall_seconds,
                "pods": pods,
                "nodes": nodes,
                "workloads": {key: _part(w) for key, w in self.workloads.items()},
                "autoscalers": {
                    "cluster-autoscaler": _part(self.cluster_autoscaler),
                    "hpa": _part(self.hpa),
                    "escalator": _part(self.escalator),
                },
            },
            self.extra,
        )


def _part(part: Any, **nested: Any) -> dict[str, Any]:
    """One dataclass as a JSON object: its scalar fields, ``nested`` ones as given, then its ``extra``.
    A field beyond the contract's (``metadata={"contract": False}``) is written only when the part's
    autoscaler ran (its ``enabled``)."""
    out: dict[str, Any] = {}
    ran = getattr(part, "enabled", True)
    for name, spec in part.__dataclass_fields__.items():
        if name == "extra" or not spec.metadata.get("json", True):
            continue
        if ran or spec.metadata.get("contract", True):
            out[name] = nested[name] if name in nested else getattr(part, name)
    return _merge(out, part.extra)


def _merge(contract: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    clash = sorted(set(contract) & set(extra))
    if clash:
        raise ValueError(f"summary extra keys {clash} would replace contract keys")
    return {**contract, **extra}


def write_summary_json(path: str | Path, summary: Summary) -> None:
    Path(path).write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
