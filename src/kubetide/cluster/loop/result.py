"""What one Cluster Autoscaler loop returns: its events, counts, decisions and the writes it leaves to
the caller (status, state and learned-templates ConfigMaps, capacity statuses, metrics).

Kept apart from :mod:`kubetide.cluster.loop.world` (what the loop reads) because a result carries the
loop's plan, and the plan's stages read the world: one module holding both would import itself in a
circle. Pure values; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubetide.cluster.loop.world import CAEvent, LoopStats

if TYPE_CHECKING:
    from kubetide.cluster.capacity.objects import CapacityWrite
    from kubetide.cluster.capacity.report import CapacityReport
    from kubetide.cluster.loop.outcome import Failure
    from kubetide.cluster.loop.plan import LoopPlan
    from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
    from kubetide.cluster.status import ClusterAutoscalerStatus

__all__ = ["LoopMetrics", "LoopResult"]


@dataclass
class LoopResult:
    events: list[CAEvent] = field(default_factory=list)
    stats: LoopStats = field(default_factory=LoopStats)
    scale_up_result: str = ""
    scale_down_result: str = ""
    error: str | None = None
    # Nodes the loop found unneeded (with since) and why others cannot go, for explain / tests.
    unneeded: dict[str, float] = field(default_factory=dict)
    unremovable: dict[str, str] = field(default_factory=dict)
    # For BlockedByPod nodes: the blocking pod (namespace/name) and the drain rule's reason.
    blocking_pods: dict[str, tuple[str, str]] = field(default_factory=dict)
    # kubetide, for explain: nodes scale-down did not consider at all, and why (upstream drops them
    # from the candidates without a reason: a group at its minimum size, no group, being deleted).
    not_candidates: dict[str, str] = field(default_factory=dict)
    # The driver's writes of the ConfigMaps the autoscaler owns that failed this loop (retried next).
    write_problems: list[str] = field(default_factory=list)
    # A deletions pass between loops: the nodes it removed, by CA's scaled_down_nodes_total reason, and
    # its evictions, by CA's evicted_pods_total eviction_result.
    deleted_between_loops: dict[str, int] = field(default_factory=dict)
    evicted_between_loops: dict[str, int] = field(default_factory=dict)
    # What live mode's Prometheus metrics and status ConfigMap need, computed by the loop.
    metrics: LoopMetrics | None = None
    status: ClusterAutoscalerStatus | None = None
    # kubetide: the data of the autoscaler's state ConfigMap (``cluster.clusterstate.persisted``), for
    # the driver to write; None when the loop has not read the previous state back yet.
    state: Mapping[str, str] | None = None
    # The scale-up decision (groups skipped and why, the expander's steps, the plan), for ``explain``.
    scale_up: ScaleUpDecision | None = None
    # kubetide: the data of the learned-templates ConfigMap (``cluster.clusterstate.learned_templates``).
    templates: Mapping[str, str] | None = None
    # When a deletion in progress takes its next step (the end of --node-delete-delay-after-taint, an
    # eviction retry, a look for the evicted pods), the earliest; None: none waits. The driver's runner
    # may call ``run_deletions`` then, as CA's deletion goroutine wakes.
    deletions_due_at: float | None = None
    # How long each of CA's functions took (``cluster.loop.timing``; empty without a stopwatch).
    function_durations: list[tuple[str, float]] = field(default_factory=list)
    # The capacity APIs' writes (statuses, managed PodTemplates, deletions), for the driver, and what
    # they did this loop (cluster.capacity); empty and None when no capacity flag is on.
    capacity_writes: list[CapacityWrite] = field(default_factory=list)
    capacity: CapacityReport | None = None
    # What the loop decided, phase by phase (``cluster.loop.plan``), and the actions that failed.
    plan: LoopPlan | None = None
    failures: tuple[Failure, ...] = ()
    # The nodes whose deletion this loop's scale-down started (tainted), and those whose DeleteNodes
    # call this loop or pass made (live mode's /debug/plan keeps a record of each deletion).
    deletions_started: tuple[str, ...] = ()
    nodes_deleted: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoopMetrics:
    """CA's loop gauges and this loop's counter increments, as plain numbers (``cluster_autoscaler_*``).

    ``nodes_by_state`` keys are CA's ``nodes_count{state}`` labels (ready, unready, notStarted,
    longUnregistered, unregistered); ``scaled_down_nodes`` keys CA's ``scaled_down_nodes_total{reason}``
    (empty, underutilized, unready); ``failed_scale_ups`` keys ``failed_scale_ups_total{reason}``
    (cloudProviderError, timeout, or the instance error code).
    """

    unschedulable_pods: int = 0
    unneeded_nodes: int = 0
    nodes_by_state: Mapping[str, int] = field(default_factory=dict)
    node_groups: int = 0
    scaled_up_nodes: int = 0
    scaled_down_nodes: Mapping[str, int] = field(default_factory=dict)
    failed_scale_ups: Mapping[str, int] = field(default_factory=dict)
    evicted_pods: Mapping[str, int] = field(default_factory=dict)  # evicted_pods_total{eviction_result}
    cluster_safe_to_autoscale: bool = True
    api_errors: int = 0
    # kubetide: per group, unregistered instances past the provision time that kubetide did not launch
    # and keeps (kubetide_cluster_autoscaler_kept_foreign_instances{node_group}).
    kept_foreign_instances: Mapping[str, int] = field(default_factory=dict)
