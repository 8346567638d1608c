"""What one Cluster Autoscaler loop reads and how it acts: the world view, the cluster port, the result.

``World`` is a snapshot of the API server taken by the caller (nodes as the API shows them, with the
node lifecycle taints; every live pod, scheduled or pending with its ``Unschedulable`` message; PDBs
with their ``disruptionsAllowed``; ConfigMaps by ``namespace/name``). ``ClusterPort`` is the API
writes CA makes besides the cloud: node taints and evictions. Events and counters come back in the
:class:`LoopResult`, for the caller to record. Pure values; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import PDB

__all__ = ["CAEvent", "ClusterPort", "LoopResult", "LoopStats", "World"]


@dataclass(frozen=True, slots=True)
class World:
    nodes: Sequence[NodeView]
    pods: Sequence[Pod]
    pdbs: Sequence[PDB] = ()
    config_maps: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # "namespace/name" -> data
    # Replicas of the workload controllers pods may name, by (kind, namespace, name): the drain rules
    # for minimum replicas and missing controllers need them. None: the caller has no listers.
    controllers: Mapping[tuple[str, str, str], int] | None = None


class ClusterPort(Protocol):
    """The Kubernetes API writes of CA (the cloud is reached through the cloud-provider port)."""

    def set_node_taints(self, node: str, taints: tuple[Taint, ...]) -> None:
        """Replace ``node``'s taints (CA adds and removes its own ones)."""
        ...

    def evict(self, pod: Pod) -> bool:
        """The Eviction API: False when a PodDisruptionBudget refuses it (retry later)."""
        ...


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
    """What the loop did, for the summary's ``autoscalers.cluster-autoscaler`` counts."""

    scale_ups: int = 0
    nodes_added: int = 0
    scale_downs: int = 0
    nodes_removed: int = 0
    failed_scale_ups: int = 0
    backoffs: int = 0
    unregistered_removed: int = 0
    failed_removed: int = 0

    def add(self, other: LoopStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


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
