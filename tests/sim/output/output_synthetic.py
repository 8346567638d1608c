"""A fake run for the output tests: a crude 6-hour cluster with a sine-shaped load, with no simulator.

Two node groups (``general``, on-demand with a fixed floor, and ``spot-a``, scaled with lag), workloads
whose replicas follow their load through an HPA-like rule with a lag, pods that wait for nodes. The
numbers only need to be plausible and deterministic; the events follow the contract's reasons and data
keys so a strict ``EventLog`` accepts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kubetide.sim.output import (
    EventLog,
    GroupSummary,
    ReportMeta,
    Summary,
    Timeline,
    WorkloadSummary,
    time_to_schedule,
    timeline_columns,
)

GROUPS = ("general", "spot-a")
PRICES = {"general": 0.192, "spot-a": 0.035}
PODS_PER_NODE = 8
CAPACITY_PER_POD = 50.0
TARGET = 60.0


@dataclass
class FakeRun:
    summary: Summary
    timeline: Timeline
    events: EventLog
    meta: ReportMeta


def fake_run(hours: float = 6.0, step: float = 15.0, workloads: int = 1, seed: int = 7) -> FakeRun:
    rng = np.random.default_rng(seed)
    keys = ["Deployment/default/web", "Deployment/default/api", "Deployment/batch/worker"][:workloads]
    duration = hours * 3600
    columns = timeline_columns(GROUPS, keys)
    timeline = Timeline(columns)
    events = EventLog(strict=True)
    events.emit(0, "scenario", "ActionApplied", "Scenario/fake", "scenario loaded", {})

    replicas = {k: 2 for k in keys}
    history: dict[str, list[tuple[float, int]]] = {k: [] for k in keys}
    ready = {k: 2 for k in keys}
    created_at: dict[str, list[float]] = {k: [] for k in keys}
    waits: list[float] = []
    nodes = {"general": 2, "spot-a": 0}
    target = {"general": 2, "spot-a": 0}
    booting: list[tuple[float, str]] = []
    stats = {k: WorkloadSummary(min_replicas=2, max_replicas=2) for k in keys}
    group_stats = {g: GroupSummary(final=0, max=nodes[g]) for g in GROUPS}
    pod_seq = 0
    pending_pod_seconds = 0.0
    max_pending = 0
    unneeded_since: float | None = None
    fault = (3 * 3600.0, 3.5 * 3600.0)

    for i in range(int(duration // step) + 1):
        t = i * step
        if abs(t - fault[0]) < step / 2:
            events.emit(t, "scenario", "FaultStarted", "NodeGroup/spot-a", "spot capacity unavailable", {})
        if abs(t - fault[1]) < step / 2:
            events.emit(t, "scenario", "FaultEnded", "NodeGroup/spot-a", "spot capacity back", {})
        in_fault = fault[0] <= t < fault[1]

        # Nodes that finished booting.
        for due, group in [b for b in booting if b[0] <= t]:
            booting.remove((due, group))
            nodes[group] += 1
            name = f"{group}-{nodes[group]}-{int(due)}"
            data = {"group": group, "node": name, "instance": f"i-{int(due):x}"}
            events.emit(t, "kubelet", "NodeRegistered", f"Node/{name}", "node registered", data)
            events.emit(t, "kubelet", "NodeReady", f"Node/{name}", "node is ready", data)

        loads = {}
        for j, key in enumerate(keys):
            base = 300 + 250 * math.sin(2 * math.pi * (t / (3 * 3600) + j / 3))
            loads[key] = max(0.0, base + float(rng.normal(0, 12)))
            utilization = loads[key] / (max(ready[key], 1) * CAPACITY_PER_POD) * 100
            if i % 4 == 0:  # an HPA sync every minute
                recommended = max(2, math.ceil(ready[key] * utilization / TARGET))
                # The HPA's downscale stabilization: never below the highest recommendation of 5 minutes.
                history[key] = [(at, r) for at, r in history[key] if t - at < 300] + [(t, recommended)]
                desired = max(r for _, r in history[key]) if recommended < replicas[key] else recommended
                if abs(utilization / TARGET - 1) > 0.1 and desired != replicas[key]:
                    events.emit(
                        t,
                        "hpa",
                        "SuccessfulRescale",
                        f"HorizontalPodAutoscaler/{key.split('/', 1)[1]}",
                        f"New size: {desired}; reason: cpu resource utilization (percentage of request) "
                        f"{'above' if desired > replicas[key] else 'below'} target",
                        {"from": replicas[key], "to": desired},
                    )
                    stats[key].scale_events += 1
                    if desired > replicas[key]:
                        created_at[key] += [t] * (desired - replicas[key])
                    else:
                        created_at[key] = created_at[key][
                            : max(0, len(created_at[key]) - (replicas[key] - desired))
                        ]
                        ready[key] = min(ready[key], desired)
                    replicas[key] = desired

        # Pods fit where there are nodes; the rest wait.
        room = (nodes["general"] + nodes["spot-a"]) * PODS_PER_NODE
        for key in keys:
            others = sum(ready[k] for k in keys if k != key)
            can = max(0, min(replicas[key], room - others))
            while ready[key] < can and created_at[key]:
                born = created_at[key].pop(0)
                pod_seq += 1
                ready[key] += 1
                waits.append(t - born)
                node = f"spot-a-{nodes['spot-a']}" if nodes["spot-a"] else "general-1"
                events.emit(
                    t,
                    "scheduler",
                    "Scheduled",
                    f"Pod/default/web-{pod_seq:05d}",
                    f"Successfully assigned to {node}",
                    {"node": node},
                )
            ready[key] = min(ready[key], replicas[key])
        pending = sum(replicas[k] - ready[k] for k in keys)
        pending_pod_seconds += pending * step
        max_pending = max(max_pending, pending)

        # A crude cluster autoscaler on spot-a.
        needed = math.ceil(sum(replicas.values()) / PODS_PER_NODE) - nodes["general"]
        needed = max(0, needed)
        if needed > target["spot-a"] and i % 2 == 0:
            if in_fault:
                events.emit(
                    t,
                    "cluster-autoscaler",
                    "FailedToScaleUpGroup",
                    "NodeGroup/spot-a",
                    "out of capacity",
                    {"group": "spot-a"},
                )
                events.emit(
                    t,
                    "cluster-autoscaler",
                    "NodeGroupBackoff",
                    "NodeGroup/spot-a",
                    "backing off",
                    {"group": "spot-a", "until": t + 300},
                )
            else:
                events.emit(
                    t,
                    "cluster-autoscaler",
                    "TriggeredScaleUp",
                    "Pod/default/web-pending",
                    f"pod triggered scale-up: [{{spot-a {target['spot-a']}->{needed} (max: 20)}}]",
                    {"groups": ["spot-a"]},
                )
                events.emit(
                    t,
                    "cluster-autoscaler",
                    "ScaledUpGroup",
                    "NodeGroup/spot-a",
                    f"Scale-up: setting group spot-a size to {needed}",
                    {"group": "spot-a", "from": target["spot-a"], "to": needed},
                )
                for _ in range(needed - target["spot-a"]):
                    booting.append((t + 150, "spot-a"))
                    events.emit(
                        t,
                        "cloud",
                        "InstanceCreated",
                        "Instance/spot-a",
                        "instance created",
                        {"group": "spot-a", "instance": f"i-{int(t):x}"},
                    )
                target["spot-a"] = needed
        elif needed < nodes["spot-a"] and not booting:
            unneeded_since = t if unneeded_since is None else unneeded_since
            if t - unneeded_since >= 600:
                name = f"spot-a-{nodes['spot-a']}"
                events.emit(
                    t,
                    "cluster-autoscaler",
                    "ScaleDown",
                    f"Node/{name}",
                    f"Scale-down: removing node {name}",
                    {"group": "spot-a", "node": name},
                )
                events.emit(
                    t,
                    "cloud",
                    "InstanceTerminated",
                    "Instance/spot-a",
                    "instance terminated",
                    {"group": "spot-a", "instance": name, "reason": "cluster-autoscaler"},
                )
                nodes["spot-a"] -= 1
                target["spot-a"] = nodes["spot-a"]
                unneeded_since = None
        else:
            unneeded_since = None

        row: dict[str, float] = {"t": t}
        for g in GROUPS:
            row[f"nodes:{g}"] = nodes[g]
            row[f"target:{g}"] = target[g]
            group_stats[g].max = max(group_stats[g].max, nodes[g])
            group_stats[g].node_seconds += nodes[g] * step
        for key in keys:
            row[f"replicas:{key}"] = replicas[key]
            row[f"ready:{key}"] = ready[key]
            row[f"cpu_utilization:{key}"] = (
                min(100.0, loads[key] / (ready[key] * CAPACITY_PER_POD) * 100) if ready[key] else math.nan
            )
            row[f"rps:{key}"] = loads[key]
            if loads[key] > ready[key] * CAPACITY_PER_POD:
                stats[key].overloaded_seconds += step
            stats[key].min_replicas = min(stats[key].min_replicas, replicas[key])
            stats[key].max_replicas = max(stats[key].max_replicas, replicas[key])
            stats[key].final_replicas = replicas[key]
        row["pending_pods"] = pending
        row["cost_per_hour"] = sum(nodes[g] * PRICES[g] for g in GROUPS)
        timeline.append(row)

    for g in GROUPS:
        group_stats[g].final = nodes[g]
        group_stats[g].cost = group_stats[g].node_seconds * PRICES[g] / 3600
    summary = Summary(scenario="fake-sine", seed=seed, simulated_seconds=duration, wall_seconds=0.42)
    summary.pods.pending_pod_seconds = pending_pod_seconds
    summary.pods.max_pending = max_pending
    summary.pods.time_to_schedule_seconds = time_to_schedule(
        waits + [duration - c for k in keys for c in created_at[k]]
    )
    summary.pods.unschedulable_at_end = sum(len(v) for v in created_at.values())
    summary.nodes.by_group = group_stats
    summary.nodes.node_seconds = sum(g.node_seconds for g in group_stats.values())
    summary.nodes.cost = sum(g.cost for g in group_stats.values())
    summary.nodes.final = sum(nodes.values())
    summary.nodes.max = int(max(timeline.column("nodes:general") + timeline.column("nodes:spot-a")))
    summary.workloads = stats
    summary.hpa.rescales = events.count("hpa", "SuccessfulRescale")
    ca = summary.cluster_autoscaler
    ca.scale_ups = events.count("cluster-autoscaler", "ScaledUpGroup")
    ca.nodes_added = events.count("cloud", "InstanceCreated")
    ca.scale_downs = events.count("cluster-autoscaler", "ScaleDown")
    ca.nodes_removed = ca.scale_downs
    ca.failed_scale_ups = events.count("cluster-autoscaler", "FailedToScaleUpGroup")
    ca.backoffs = events.count("cluster-autoscaler", "NodeGroupBackoff")
    meta = ReportMeta(
        scenario="fake-sine",
        seed=seed,
        duration=duration,
        node_groups=GROUPS,
        workloads=tuple(keys),
        hpa_targets={k: {"cpu_utilization": TARGET} for k in keys},
        capacity_per_pod={k: CAPACITY_PER_POD for k in keys},
        description="Synthetic data for the output tests: a sine-shaped load over two node groups.",
    )
    return FakeRun(summary, timeline, events, meta)
