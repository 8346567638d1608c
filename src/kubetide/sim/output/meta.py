"""What the report needs to know about the scenario that the summary and timeline do not say.

The simulator builds one ``ReportMeta`` from the loaded scenario: which node groups and workloads to plot
(in the scenario's order, which fixes each one's colour), and each workload's HPA targets so the
utilization plot can draw the line the HPA steers towards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubetide.sim.replay.recording import RecordedDay

__all__ = ["PALETTE", "EscalatorGroupSeries", "ReportMeta"]

# Tableau 10, reordered so the first few are far apart; colour-blind friendlier than matplotlib's default
# cycle and readable on white.
PALETTE: tuple[str, ...] = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#b07aa1",
    "#edc948",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)


@dataclass(frozen=True)
class EscalatorGroupSeries:
    """One batch autoscaler group over the run, one point per loop: CPU and memory utilization (percent
    of the untainted nodes' allocatable, NaN while there are none) against its thresholds, and its
    untainted and tainted (removal or force taint) nodes."""

    cloud_group: str
    t: tuple[float, ...] = ()
    cpu_percent: tuple[float, ...] = ()
    mem_percent: tuple[float, ...] = ()
    untainted: tuple[float, ...] = ()
    tainted: tuple[float, ...] = ()
    scale_up_threshold: float = 0.0
    taint_upper_threshold: float = 0.0
    taint_lower_threshold: float = 0.0


@dataclass(frozen=True)
class ReportMeta:
    """``hpa_targets[workload]`` maps a metric to its target, e.g. ``{"cpu_utilization": 60}`` (percent of
    requests) or ``{"rps": 50}`` (average per pod); ``None`` or absent: no HPA scales that workload.
    ``capacity_per_pod[workload]`` (the traffic's ``capacityPerPod``) lets the rps plot show what the
    Ready pods can serve, so overload is visible where the load line crosses it."""

    scenario: str
    seed: int
    duration: float
    node_groups: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()
    hpa_targets: Mapping[str, Mapping[str, float] | None] = field(default_factory=dict)
    capacity_per_pod: Mapping[str, float] = field(default_factory=dict)  # rps one Ready pod serves
    description: str = ""
    escalator: Mapping[str, EscalatorGroupSeries] = field(default_factory=dict)  # empty: not running
    # The cluster autoscaler's status ConfigMap as its last loop wrote it (YAML); None: CA did not run.
    ca_status_config_map: str | None = None
    # The day this run replays (spec.recording), drawn beside it; None: not a replay.
    recorded: RecordedDay | None = None

    def group_color(self, group: str) -> str:
        return PALETTE[self.node_groups.index(group) % len(PALETTE)]

    def workload_color(self, workload: str) -> str:
        # Offset past the groups so a workload never shares a colour with a group on the same page
        # (while there are fewer than ten of both).
        offset = len(self.node_groups)
        return PALETTE[(offset + self.workloads.index(workload)) % len(PALETTE)]

    def cpu_target(self, workload: str) -> float | None:
        targets = self.hpa_targets.get(workload)
        if not targets:
            return None
        value = targets.get("cpu_utilization")
        return None if value is None else float(value)
