"""The batch autoscaler inside the simulation: Escalator's loop driver run every ``scanInterval`` by the
shared :class:`~kubetide.runners.EscalatorRunner` on the simulation's clock.

The driver and executor are live mode's (:class:`~kubetide.escalator.driver.EscalatorDriver`); this
module passes the simulated ports and keeps the run's statistics, series and events: :class:`~kubetide.sim.ports.SimWorldSource` for the world
(every Node with its taints and annotations, every live pod), :class:`~kubetide.sim.ports.SimClusterPort`
for taints and Node deletions, and a ``client("escalator")`` handle on the simulated cloud that lists
only the groups Escalator is configured for, so terminations are attributed to it. It never evicts:
the executor calls no eviction, and a node deleted after the hard grace period takes its pods with it
(the cluster's pod garbage collection, as on a real cluster).

Events (scenario contract §10.2): the executor writes one Kubernetes-style Event per node and call;
the log gets one per action and group instead, with the contract's data (``EscalatorScaleUp``
``{group, delta}``, ``EscalatorTaint``/``EscalatorUntaint``/``EscalatorDelete`` ``{group, nodes}``),
built from the tick's :class:`~kubetide.escalator.result.TickResult`. Failures, a held scale lock and a
group's run error keep the executor's and driver's reasons and messages, with ``{group}``. Dry mode
writes no events, as live mode (its would-be actions are counted in the summary).

A restart (scenario action) forgets the driver's memory (scale lock, cached node size, dry-mode
trackers); taints and their times stay on the Nodes, so reaping resumes on time. Escalator's metrics
accumulate over the whole run (a restarted process would start them from zero; the summary wants the
run's totals).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kubetide.clock import VirtualClock
from kubetide.escalator.driver import EscalatorDriver
from kubetide.escalator.executor import ActionKind, Execution
from kubetide.escalator.reasons import EventReason, Message
from kubetide.escalator.result import GroupRun, TickResult
from kubetide.escalator.samples import MetricKind, Sample
from kubetide.runners import EscalatorRunner
from kubetide.sim.cloud.simulated import SimulatedCloud
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.store import EventSink
from kubetide.sim.output.meta import EscalatorGroupSeries
from kubetide.sim.ports import SimClusterPort, SimWorldSource
from kubetide.sim.scenario.autoscalers import EscalatorSettings

__all__ = ["SOURCE", "EscalatorStats", "SimEscalator", "series_name"]

SOURCE = "escalator"
# The executor's per-node success events; the log gets one per action and group instead.
_AGGREGATED = frozenset({EventReason.TAINT, EventReason.UNTAINT, EventReason.DELETE, EventReason.SCALE_UP})


@dataclass
class GroupStats:
    scale_ups: int = 0
    nodes_added: int = 0  # cloud increases
    nodes_untainted: int = 0  # scale-ups served by untainting
    nodes_tainted: int = 0
    nodes_removed: int = 0
    pods_on_removed_nodes: int = 0  # Escalator's node_group_pods_evicted: killed, never evicted

    def as_json(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class EscalatorStats:
    loops: int = 0
    errors: int = 0
    by_group: dict[str, GroupStats] = field(default_factory=dict)
    dry_run_actions: Counter[str] = field(default_factory=Counter)

    def total(self, name: str) -> int:
        return sum(int(getattr(g, name)) for g in self.by_group.values())


def series_name(sample: Sample) -> str:
    """Prometheus' text form of a series: ``name{label="value",...}``."""
    if not sample.labels:
        return sample.name
    labels = ",".join(f'{k}="{v}"' for k, v in sample.labels)
    return f"{sample.name}{{{labels}}}"


@dataclass
class _Series:
    t: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    mem: list[float] = field(default_factory=list)
    untainted: list[float] = field(default_factory=list)
    tainted: list[float] = field(default_factory=list)


def _percent(value: float) -> float:
    # +inf is "scale up from zero nodes": plotted as a gap, as Escalator's gauge reports 0 for it.
    return value if math.isfinite(value) else math.nan


class SimEscalator:
    """Escalator in a simulation: its ports, its runner, and what the run reports of it (it is the
    runner's reporter)."""

    def __init__(
        self,
        clock: VirtualClock,
        cluster: SimCluster,
        cloud: SimulatedCloud,
        settings: EscalatorSettings,
        events: EventSink,
    ) -> None:
        self.settings = settings
        self.events = events
        self.groups = settings.groups
        self._pending: list[tuple[str, str, str, str]] = []  # the executor's events of this tick
        self.port = SimClusterPort(cluster, self, SOURCE)
        owned = {g.cloud_provider_group_name for g in self.groups}
        self.driver = EscalatorDriver(
            self.groups,
            SimWorldSource(cluster),
            self.port,
            cloud.client(SOURCE, owned),
            dry_run=settings.drymode,
        )
        self.stats = EscalatorStats(by_group={g.name: GroupStats() for g in self.groups})
        self._series = {g.name: _Series() for g in self.groups}
        self._metrics: tuple[Sample, ...] = ()
        self._histograms: dict[str, list[float]] = {}
        self.runner = EscalatorRunner(self.driver, clock, float(settings.scanInterval), self)

    def start(self, phase: float) -> None:
        self.runner.start(phase)

    def restart(self) -> None:
        self.runner.restart()

    # The port's event sink: hold the executor's events until the tick's result says which group.
    def emit(
        self,
        t: float,
        source: str,
        reason: str,
        object: str,
        message: str,
        data: dict[str, Any] | None = None,
    ) -> None:
        self._pending.append((reason, object, message, source))

    # --- the runner's reporter: accounting ------------------------------------------------------------

    def loop_started(self, now: float) -> None:
        self._pending = []

    def loop_finished(self, result: TickResult, now: float) -> None:
        self.stats.loops += 1
        self.stats.errors += len(result.errors)
        self._metrics = result.metrics
        for sample in result.observations:
            if sample.kind is MetricKind.HISTOGRAM:
                self._histograms.setdefault(series_name(sample), []).append(sample.value)
        owner = _owners(result)
        for run in result.groups:
            self._record_group(run, now)
            self._emit_group(run, now)
            for reason, obj, message, source in self._pending:
                if owner.get(obj) == run.group and reason not in _AGGREGATED:
                    self.events.emit(now, source, str(reason), obj, message, {"group": run.group})
        for reason, obj, message, source in self._pending:  # a driver event about no group: as it is
            if obj not in owner:
                self.events.emit(now, source, str(reason), obj, message, {})
        self._pending = []

    def _record_group(self, run: GroupRun, now: float) -> None:
        stats = self.stats.by_group[run.group]
        execution = run.execution
        for action in execution.actions:
            if action.dry_run:
                self.stats.dry_run_actions[str(action.kind)] += action.count
        stats.nodes_tainted += len(execution.done(ActionKind.TAINT))
        stats.nodes_untainted += len(execution.done(ActionKind.UNTAINT))
        stats.nodes_removed += len(execution.done(ActionKind.DELETE))
        stats.nodes_added += _added(execution)
        stats.pods_on_removed_nodes += execution.pods_evicted
        if self._scaled_up(run):
            stats.scale_ups += 1
        d = run.decision
        if d is None:
            return
        s = self._series[run.group]
        s.t.append(now)
        s.cpu.append(_percent(d.cpu_percent))
        s.mem.append(_percent(d.mem_percent))
        s.untainted.append(float(len(d.buckets.untainted)))
        s.tainted.append(float(len(d.buckets.tainted) + len(d.buckets.force_tainted)))

    @staticmethod
    def _scaled_up(run: GroupRun) -> bool:
        """A scale-up that did something: nodes untainted or the cloud group grown (not in dry mode)."""
        e = run.execution
        done = _added(e) > 0 or bool(e.done(ActionKind.UNTAINT))
        return run.decision is not None and run.decision.delta > 0 and done

    def _emit_group(self, run: GroupRun, now: float) -> None:
        """The group's actions in the executor's order (untaint, grow, delete, taint), each one event
        naming all its nodes; messages are Escalator's per-node log lines, joined."""
        e, group, obj = run.execution, run.group, f"NodeGroup/{run.group}"
        untainted = list(e.done(ActionKind.UNTAINT))
        if untainted:
            message = Message.untainting(", ".join(untainted))
            self.events.emit(
                now, SOURCE, str(EventReason.UNTAINT), obj, message, {"group": group, "nodes": untainted}
            )
        if run.decision is not None and self._scaled_up(run):
            delta, added = run.decision.delta, _added(e)
            parts = [f"untainted {len(untainted)} node(s)"] if untainted else []
            parts += [Message.increasing(added)] if added else []
            data = {"group": group, "delta": delta, "untainted": len(untainted), "increase": added}
            message = f"scale up by {delta}: {', '.join(parts)}"
            self.events.emit(now, SOURCE, str(EventReason.SCALE_UP), obj, message, data)
        deleted = list(e.done(ActionKind.DELETE))
        if deleted:
            message = f"Deleting tainted node {', '.join(deleted)}"
            self.events.emit(
                now, SOURCE, str(EventReason.DELETE), obj, message, {"group": group, "nodes": deleted}
            )
        tainted = list(e.done(ActionKind.TAINT))
        if tainted:
            message = Message.tainting(", ".join(tainted))
            self.events.emit(
                now, SOURCE, str(EventReason.TAINT), obj, message, {"group": group, "nodes": tainted}
            )

    # --- outputs ----------------------------------------------------------------------------------

    def metric_values(self) -> dict[str, float]:
        """Escalator's series at the end of the run, by Prometheus name and labels; histograms as their
        ``_count`` and ``_sum``."""
        out = {series_name(s): s.value for s in self._metrics}
        for name, values in self._histograms.items():
            base, _, labels = name.partition("{")
            suffix = "{" + labels if labels else ""
            out[f"{base}_count{suffix}"] = float(len(values))
            out[f"{base}_sum{suffix}"] = float(sum(values))
        return dict(sorted(out.items()))

    def group_series(self) -> dict[str, EscalatorGroupSeries]:
        """Per group, what the report plots: utilization against the thresholds, node buckets."""
        out: dict[str, EscalatorGroupSeries] = {}
        for g in self.groups:
            s = self._series[g.name]
            out[g.name] = EscalatorGroupSeries(
                cloud_group=g.cloud_provider_group_name,
                t=tuple(s.t),
                cpu_percent=tuple(s.cpu),
                mem_percent=tuple(s.mem),
                untainted=tuple(s.untainted),
                tainted=tuple(s.tainted),
                scale_up_threshold=float(g.scale_up_threshold_percent),
                taint_upper_threshold=float(g.taint_upper_capacity_threshold_percent),
                taint_lower_threshold=float(g.taint_lower_capacity_threshold_percent),
            )
        return out


def _added(execution: Execution) -> int:
    """Nodes the cloud group was grown by (0 in dry mode or when the cloud refused)."""
    return sum(a.count for a in execution.actions if a.kind is ActionKind.INCREASE and a.ok and not a.dry_run)


def _owners(result: TickResult) -> dict[str, str]:
    """Which group each event object of the tick is about: ``NodeGroup/<group>``, and every node an
    action of the group touched (a node belongs to one group: the label selects it)."""
    owner: dict[str, str] = {}
    for run in result.groups:
        owner[f"NodeGroup/{run.group}"] = run.group
        for action in run.execution.actions:
            if action.kind is not ActionKind.INCREASE:
                owner[f"Node/{action.target}"] = run.group
    return owner
