"""What one Cluster Autoscaler loop reads and what it returns: the world view and the loop's result.

``World`` is a snapshot of the API server taken by the caller (nodes as the API shows them, with the
node lifecycle taints; every live pod, scheduled or pending with its ``Unschedulable`` message; PDBs
with their ``disruptionsAllowed``; ConfigMaps by ``namespace/name``; the workload controllers'
replicas). The loop acts through :class:`kubetide.model.api.ClusterPort` and the cloud-provider port;
events, counters, the metrics live mode exports and the status ConfigMap's value come back in the
:class:`LoopResult`, for the caller to record. Pure values; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import PDB

if TYPE_CHECKING:
    from kubetide.cluster.capacity.objects import CapacityObjects, CapacityWrite
    from kubetide.cluster.capacity.report import CapacityReport
    from kubetide.cluster.loop.outcome import Failure
    from kubetide.cluster.loop.plan import LoopPlan
    from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
    from kubetide.cluster.status import ClusterAutoscalerStatus

__all__ = ["CAEvent", "LoopMetrics", "LoopResult", "LoopStats", "World"]


@dataclass(frozen=True, slots=True)
class World:
    nodes: Sequence[NodeView]
    pods: Sequence[Pod]
    pdbs: Sequence[PDB] = ()
    config_maps: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # "namespace/name" -> data
    # Replicas of the workload controllers pods may name, by (kind, namespace, name): the drain rules
    # for minimum replicas and missing controllers need them. None: the caller has no listers.
    controllers: Mapping[tuple[str, str, str], int] | None = None
    # One pod per DaemonSet, made from its pod template (as CA's DaemonSet lister gives it): a group at
    # zero counts the DaemonSets that would run on a new node even when none has a pod anywhere yet.
    daemonsets: Sequence[Pod] = ()
    # Optional indexes a source that tracks changes keeps, so a loop need not walk every pod: by node
    # name, the pods of ``pods`` bound to it that are not Succeeded or Failed; and the pods of ``pods``
    # bound to no node; each in ``pods``' order. A node's sequence may be the very object of the last
    # world's while its pods are unchanged; nobody may change one. None: derived from ``pods``.
    pods_by_node: Mapping[str, Sequence[Pod]] | None = None
    unbound_pods: Sequence[Pod] | None = None
    # The CapacityBuffers, ProvisioningRequests and CapacityQuotas (cluster.capacity); None: none read.
    capacity: CapacityObjects | None = None


@dataclass(frozen=True, slots=True)
class CAEvent:
    """One event: ``object`` is ``Kind/[namespace/]name`` (``NodeGroup/<id>`` for group-level events);
    ``data`` holds the scenario contract's keys for the reason."""

    type: str
    reason: str
    object: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class LoopStats:
    """What the loop did, counted: one loop's in its result, the driver's totals over a run.

    The one source of the summary's ``autoscalers.cluster-autoscaler`` block: the simulator's
    :class:`~kubetide.sim.output.summary.ClusterAutoscalerSummary` is these fields, so a count added
    here is a key there. The first seven are the scenario contract's (§10.1), in its order; a field
    with ``metadata={"contract": False}`` is kubetide's own, written beside them when CA ran.
    """

    scale_ups: int = 0
    nodes_added: int = 0
    scale_downs: int = 0
    nodes_removed: int = 0
    failed_scale_ups: int = 0
    backoffs: int = 0
    unregistered_removed: int = 0
    # Instances that failed to be created, deleted (``DeleteCreatedWithError``).
    failed_instances_removed: int = field(default=0, metadata={"contract": False})

    def add(self, other: LoopStats) -> None:
        for count in fields(LoopStats):
            setattr(self, count.name, getattr(self, count.name) + getattr(other, count.name))


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
