"""What a finished simulation adds up to: the values of ``summary.json`` (scenario contract §10.1),
from the run's accounting (the cluster's pending times, the cloud's billing, the timeline, each
autoscaler's counters). Their shape and JSON are :mod:`kubetide.sim.output.summary`'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubetide.sim.cloud.simulated import SimulatedCloud
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.workloads import ReplicatedWorkload
from kubetide.sim.cluster_autoscaler import SimClusterAutoscaler
from kubetide.sim.escalator import SimEscalator
from kubetide.sim.hpa import SimHPA
from kubetide.sim.output.summary import (
    ClusterAutoscalerSummary,
    EscalatorSummary,
    GroupSummary,
    HpaSummary,
    NodesSummary,
    PodsSummary,
    Summary,
    WorkloadSummary,
    time_to_schedule,
)
from kubetide.sim.output.timeline import Timeline

__all__ = ["FinishedRun", "WorkloadWatch", "summarize"]


@dataclass
class WorkloadWatch:
    """Per-workload figures the summary needs that no single moment shows (kept by the run as it goes)."""

    min_replicas: int
    max_replicas: int
    scale_events: int = 0
    overloaded_seconds: float = 0.0
    capacity_per_pod: float | None = None


@dataclass(frozen=True, slots=True)
class FinishedRun:
    """What the summary reads of a finished run: its accounts, each autoscaler's runner (None: off)."""

    scenario: str
    seed: int
    duration: float
    cluster: SimCluster
    cloud: SimulatedCloud
    groups: Sequence[str]
    node_max: Mapping[str, int]
    timeline: Timeline | None
    workload_keys: Sequence[str]
    watch: Mapping[str, WorkloadWatch]
    ca: SimClusterAutoscaler | None
    hpa: SimHPA | None
    escalator: SimEscalator | None


def summarize(sim: FinishedRun, wall_seconds: float) -> Summary:
    end = sim.duration
    stats = sim.cluster.stats
    # Pods never bound count as waiting until the end of the run.
    waits = [*stats.time_to_schedule, *(end - p.created for p in sim.cluster.pending_pods.values())]
    pods = PodsSummary(
        pending_pod_seconds=stats.pending_seconds,
        max_pending=stats.max_pending,
        time_to_schedule_seconds=time_to_schedule(waits),
        unschedulable_at_end=sum(1 for p in sim.cluster.pending_pods.values() if p.unschedulable is not None),
        extra={"pending_at_end": len(sim.cluster.pending_pods)},
    )
    billing = sim.cloud.billing(end)
    ready_now = dict.fromkeys(sim.groups, 0)
    for node in sim.cluster.nodes.values():
        if node.ready and node.group in ready_now:
            ready_now[node.group] += 1
    by_group = {
        g: GroupSummary(
            final=ready_now[g],
            # Nodes may turn Ready after the last timeline row (the run's end is not on a row).
            max=max(sim.node_max.get(g, 0), ready_now[g]),
            node_seconds=billing.get(g, (0.0, 0.0))[0],
            cost=round(billing.get(g, (0.0, 0.0))[1], 6),
        )
        for g in sim.groups
    }
    nodes = NodesSummary(
        node_seconds=sum(g.node_seconds for g in by_group.values()),
        cost=round(sum(g.cost for g in by_group.values()), 6),
        max=max(_max_total_nodes(sim), sum(ready_now.values())),
        final=sum(ready_now.values()),
        by_group=by_group,
    )
    workloads = {}
    for key in sim.workload_keys:
        watch = sim.watch[key]
        workload = sim.cluster.workloads.get(key)
        final = workload.replicas if isinstance(workload, ReplicatedWorkload) else 0
        workloads[key] = WorkloadSummary(
            min_replicas=watch.min_replicas,
            max_replicas=watch.max_replicas,
            final_replicas=final,
            scale_events=watch.scale_events,
            overloaded_seconds=watch.overloaded_seconds,
        )
    return Summary(
        scenario=sim.scenario,
        seed=sim.seed,
        simulated_seconds=end,
        wall_seconds=round(wall_seconds, 3),
        pods=pods,
        nodes=nodes,
        workloads=workloads,
        cluster_autoscaler=_ca_summary(sim),
        hpa=HpaSummary(rescales=sim.hpa.rescales if sim.hpa is not None else 0, enabled=sim.hpa is not None),
        escalator=_escalator_summary(sim),
        extra={
            "simulated_seconds_per_wall_second": round(end / wall_seconds, 1) if wall_seconds > 0 else None
        },
    )


def _max_total_nodes(sim: FinishedRun) -> int:
    """Most Ready nodes at once over the run, from the timeline rows."""
    timeline = sim.timeline
    if timeline is None or len(timeline) == 0:
        return 0
    total = None
    for group in sim.groups:
        column = timeline.column(f"nodes:{group}")
        total = column if total is None else total + column
    return int(total.max()) if total is not None else 0


def _ca_summary(sim: FinishedRun) -> ClusterAutoscalerSummary:
    if sim.ca is None:
        return ClusterAutoscalerSummary()
    return ClusterAutoscalerSummary.of_run(sim.ca.stats, sim.ca.loops)


def _escalator_summary(sim: FinishedRun) -> EscalatorSummary:
    """The contract's four counts; beside them the untaints, per-group counts, would-be actions of dry
    mode, and Escalator's own metrics at the end of the run (its Prometheus names and labels)."""
    runner = sim.escalator
    if runner is None:
        return EscalatorSummary()  # the contract's block, all zero; tables and report leave it out
    s = runner.stats
    return EscalatorSummary(
        scale_ups=s.total("scale_ups"),
        nodes_added=s.total("nodes_added"),
        nodes_tainted=s.total("nodes_tainted"),
        nodes_removed=s.total("nodes_removed"),
        enabled=True,
        extra={
            "nodes_untainted": s.total("nodes_untainted"),
            "pods_on_removed_nodes": s.total("pods_on_removed_nodes"),
            "loops": s.loops,
            "errors": s.errors,
            "dry_run_actions": dict(sorted(s.dry_run_actions.items())),
            "by_group": {name: g.as_json() for name, g in s.by_group.items()},
            "metrics": runner.metric_values(),
        },
    )
