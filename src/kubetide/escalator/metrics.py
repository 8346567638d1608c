"""Escalator's Prometheus metrics as plain values: their names and labels, and what one run sets (spec §9).

Dashboards and alerts written for Escalator (``pkg/metrics/metrics.go``) must keep working, so the
names, labels and semantics are upstream's, quirks included: gauges a run does not reach keep their
last value; ``taint_event``, ``untaint_event`` and ``scale_lock`` are gauges that are *added to*;
``node_group_unhealthy_nodes`` is 1 when the group is healthy; ``node_group_force_tainted_nodes`` is
never registered upstream, so it is not exported. The core holds the numbers only; the live command
turns them into Prometheus series (no client library here). Values are the process's running totals,
so a new driver, like a restarted Escalator, starts its counters from zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kubetide.escalator.decision import EscalatorDecision
from kubetide.escalator.executor import ActionKind
from kubetide.escalator.reasons import Reason
from kubetide.escalator.samples import Labels, MetricKind, Sample

if TYPE_CHECKING:
    from kubetide.escalator.result import GroupRun

__all__ = [
    "HISTOGRAM_BUCKETS",
    "MetricValues",
    "record_group_run",
    "run_gauges",
]

NS = "escalator_"
RUN_COUNT = NS + "run_count"
NODES = NS + "node_group_nodes"
UNTAINTED_NODES = NS + "node_group_untainted_nodes"
TAINTED_NODES = NS + "node_group_tainted_nodes"
CORDONED_NODES = NS + "node_group_cordoned_nodes"
PODS = NS + "node_group_pods"
UNHEALTHY_NODES = NS + "node_group_unhealthy_nodes"  # 1 = healthy, 0 = unhealthy, as upstream
PODS_EVICTED = NS + "node_group_pods_evicted"
CPU_PERCENT = NS + "node_group_cpu_percent"
MEM_PERCENT = NS + "node_group_mem_percent"
CPU_REQUEST = NS + "node_group_cpu_request"
MEM_REQUEST = NS + "node_group_mem_request"
CPU_CAPACITY = NS + "node_group_cpu_capacity"
MEM_CAPACITY = NS + "node_group_mem_capacity"
TAINT_EVENT = NS + "node_group_taint_event"
UNTAINT_EVENT = NS + "node_group_untaint_event"
SCALE_LOCK = NS + "node_group_scale_lock"
SCALE_LOCK_DURATION = NS + "node_group_scale_lock_duration"
SCALE_LOCK_CHECK_WAS_LOCKED = NS + "node_group_scale_lock_check_was_locked"
SCALE_DELTA = NS + "node_group_scale_delta"
NODE_DELETE_ERRORS = NS + "node_delete_errors"
CLOUD_MIN_SIZE = NS + "cloud_provider_min_size"
CLOUD_MAX_SIZE = NS + "cloud_provider_max_size"
CLOUD_TARGET_SIZE = NS + "cloud_provider_target_size"
CLOUD_SIZE = NS + "cloud_provider_size"

# Both histograms (lock duration, node registration lag): 60 s to 29 min in minutes.
HISTOGRAM_BUCKETS = tuple(float(s) for s in range(60, 1741, 60))


def group_labels(group: str) -> Labels:
    return (("node_group", group),)


def run_gauges(decision: EscalatorDecision, group_pods: int) -> dict[str, float]:
    """The per-group gauges that one run of ``scaleNodeGroup`` sets, by name; the ones it did not
    reach (an early return, the scale lock) are absent and keep their last value."""
    b, reasons = decision.buckets, set(decision.reasons)
    out = {
        NODES: float(len(b.untainted) + len(b.tainted) + len(b.force_tainted) + len(b.cordoned)),
        CORDONED_NODES: float(len(b.cordoned)),
        UNTAINTED_NODES: float(len(b.untainted)),
        TAINTED_NODES: float(len(b.tainted)),
        PODS: float(group_pods),
        SCALE_DELTA: float(decision.delta),  # set by RunOnce whatever happened
    }
    if reasons & {Reason.NO_PODS_NO_NODES, Reason.BELOW_MIN_NODE_COUNT}:
        return out
    req, cap = decision.requests, decision.capacity
    out |= {
        CPU_REQUEST: float(req.total.cpu_m),
        MEM_REQUEST: float(req.total.mem_bytes),
        CPU_CAPACITY: float(cap.total.cpu_m),
        MEM_CAPACITY: float(cap.total.mem_bytes),
        NS + "node_group_cpu_request_largest_pending_cpu": float(req.largest_pending_cpu.cpu_m),
        NS + "node_group_mem_request_largest_pending_cpu": float(req.largest_pending_cpu.mem_bytes),
        NS + "node_group_cpu_request_largest_pending_mem": float(req.largest_pending_memory.cpu_m),
        NS + "node_group_mem_request_largest_pending_mem": float(req.largest_pending_memory.mem_bytes),
        NS + "node_group_cpu_capacity_largest_available_cpu": float(cap.largest_available_cpu.cpu_m),
        NS + "node_group_mem_capacity_largest_available_cpu": float(cap.largest_available_cpu.mem_bytes),
        NS + "node_group_cpu_capacity_largest_available_mem": float(cap.largest_available_memory.cpu_m),
        NS + "node_group_mem_capacity_largest_available_mem": float(cap.largest_available_memory.mem_bytes),
    }
    if reasons & {Reason.BELOW_MIN_UNTAINTED, Reason.PERCENT_ERROR}:
        return out
    infinite = math.isinf(decision.cpu_percent) or math.isinf(decision.mem_percent)
    # Scaling up from zero nodes: upstream reports 0 rather than MaxFloat64 "to keep metrics sane".
    out[CPU_PERCENT] = 0.0 if infinite else decision.cpu_percent
    out[MEM_PERCENT] = 0.0 if infinite else decision.mem_percent
    if Reason.LOCKED in reasons or Reason.SCALE_UP_ERROR in reasons:
        return out
    out[UNHEALTHY_NODES] = 1.0 if decision.healthy else 0.0
    return out


class MetricValues:
    """The current value of every series, kept by the driver across ticks (a process's registry)."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, Labels], tuple[MetricKind, float]] = {}

    def set(self, name: str, labels: Labels, value: float) -> None:
        self._values[(name, labels)] = (MetricKind.GAUGE, value)

    def set_all(self, values: Mapping[str, float], labels: Labels) -> None:
        for name, value in values.items():
            self.set(name, labels, value)

    def add(self, name: str, labels: Labels, value: float, kind: MetricKind = MetricKind.COUNTER) -> None:
        _, old = self._values.get((name, labels), (kind, 0.0))
        self._values[(name, labels)] = (kind, old + value)

    def get(self, name: str, labels: Labels) -> float | None:
        entry = self._values.get((name, labels))
        return None if entry is None else entry[1]

    def samples(self) -> tuple[Sample, ...]:
        return tuple(Sample(n, lb, v, k) for (n, lb), (k, v) in sorted(self._values.items()))


def record_group_run(values: MetricValues, run: GroupRun, now: float) -> list[Sample]:
    """Update ``values`` as upstream's run of this group updates its metrics; return the histogram
    observations. Counters and "added" gauges use the requested counts, as upstream adds them before
    acting; the scale lock gauge is +1 per lock taken and 0 once released."""
    d, labels, opts = run.decision, group_labels(run.group), run.options
    if d is None or opts is None:
        return []
    values.set_all(run_gauges(d, run.pods), labels)
    reasons = set(d.reasons)
    if Reason.LOCKED in reasons:
        # Twice per locked run: upstream checks locked() again when it logs the lock (String()).
        values.add(SCALE_LOCK_CHECK_WAS_LOCKED, labels, 2.0)
    below_min = Reason.BELOW_MIN_UNTAINTED in reasons
    if (below_min or (d.delta > 0 and Reason.LOCKED not in reasons)) and d.buckets.tainted:
        requested = opts.min_nodes - len(d.buckets.untainted) if below_min else d.delta
        values.add(UNTAINT_EVENT, labels, float(requested), MetricKind.GAUGE)
    if d.delta < 0 and not d.notes:
        actions = run.execution.actions
        tainted = [a for a in actions if a.kind is ActionKind.TAINT and a.target not in run.unhealthy]
        values.add(TAINT_EVENT, labels, float(len(tainted)), MetricKind.GAUGE)
    out: list[Sample] = []
    before, after = run.before.lock, run.memory.lock
    # Released this run, possibly locked again at once by a new scale-up (upstream: unlock, then lock).
    # The below-minimum path never checks the lock, so it never releases it: it only locks again.
    checked = not below_min
    if checked and before.is_locked and before.lock_time is not None and after != before:
        values.set(SCALE_LOCK, labels, 0.0)
        out.append(Sample(SCALE_LOCK_DURATION, labels, now - before.lock_time, MetricKind.HISTOGRAM))
    if after.is_locked and after.lock_time == now:
        values.add(SCALE_LOCK, labels, 1.0, MetricKind.GAUGE)
    if run.execution.pods_evicted:
        values.add(PODS_EVICTED, labels, float(run.execution.pods_evicted))
    for a in run.execution.errors:
        if a.kind is ActionKind.DELETE:
            values.add(NODE_DELETE_ERRORS, (("node_group", run.group), ("node", a.target)), 1.0)
    return out
