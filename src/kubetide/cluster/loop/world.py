"""What one Cluster Autoscaler loop reads: the world view, and the events and counts it makes.

``World`` is a snapshot of the API server taken by the caller (nodes as the API shows them, with the
node lifecycle taints; every live pod, scheduled or pending with its ``Unschedulable`` message; PDBs
with their ``disruptionsAllowed``; ConfigMaps by ``namespace/name``; the workload controllers'
replicas). The loop acts through :class:`kubetide.model.api.ClusterPort` and the cloud-provider port;
events, counters, the metrics live mode exports and the status ConfigMap's value come back in the
:class:`~kubetide.cluster.loop.result.LoopResult`, for the caller to record. Pure values; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import PDB

if TYPE_CHECKING:
    from kubetide.cluster.capacity.objects import CapacityObjects

__all__ = ["CAEvent", "LoopStats", "World"]


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
