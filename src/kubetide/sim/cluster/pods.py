"""Simulated pods: their lifecycle record, and how a controller picks which pods to delete.

A :class:`SimPod` is the mutable record the cluster updates (bound, Running, Ready, Terminating,
deleted); the immutable :class:`kubetide.model.pod.Pod` view the autoscalers read is derived from it
and cached until the pod changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kubetide.model.pod import Pod

DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}

# What happened to a pod, in order: added to the cluster's pods, changed (its view), removed from them.
ADDED, CHANGED, REMOVED = "added", "changed", "removed"
PodLog = list[tuple[str, "SimPod"]]


@dataclass(eq=False, slots=True)
class SimPod:
    spec: Pod  # scheduling-relevant view stamped from the template (name, labels, requests, ...)
    owner: str | None  # "Kind/namespace/name" of the controlling workload
    created: float
    startup_delay: float = 5.0  # bound -> Running
    readiness_delay: float = 0.0  # Running -> Ready
    run_for: float | None = None  # Job pods: Running -> Succeeded
    node: str | None = None
    bound_at: float | None = None
    running_at: float | None = None
    ready_at: float | None = None  # the last change of the Ready condition (Ready, or not any more)
    phase: str = "Pending"
    ready: bool = False
    deleted: bool = False
    # Being deleted gracefully (evicted): the end of its grace period, as the API server's
    # deletionTimestamp; it stays on its node, Terminating, until then.
    terminating_until: float | None = None
    unschedulable: str | None = None  # the FailedScheduling message while pending
    ordinal: int = -1  # StatefulSet pods
    pinned: str | None = None  # DaemonSet pods: the node they were made for
    _view: Pod | None = field(default=None, repr=False)
    # The cluster's change logs (SimCluster.watch_pods), shared by all its pods: changed() reports here.
    logs: list[PodLog] = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def key(self) -> str:
        return f"{self.spec.namespace}/{self.spec.name}"

    def view(self) -> Pod:
        """The Pod as the API server would show it now (cached until the pod changes)."""
        if self._view is None:
            self._view = self.spec.evolve(
                node_name=self.node or "",
                phase=self.phase,
                ready=self.ready if self.phase == "Running" or self.ready_at is not None else None,
                ready_transition=self.ready_at if self.ready_at is not None else self.running_at,
                start_time=self.running_at,
                # creationTimestamp is kept to the second: CA's "all pods are new" (2 s) and
                # --new-pod-scale-up-delay read it so (t = 0 stands for a whole second).
                creation_time=float(math.floor(self.created)),
                unschedulable_message=self.unschedulable,
                deletion_time=self.terminating_until,
            )
        return self._view

    def changed(self) -> None:
        self._view = None
        for log in self.logs:
            log.append((CHANGED, self))


def deletion_order(pods: list[SimPod], colocated: dict[str, int]) -> list[SimPod]:
    """Pods in the order a ReplicaSet deletes them (``ActivePodsWithRanks``), first = deleted first.

    Unassigned before assigned; Pending < Unknown < Running; not Ready before Ready; lower
    pod-deletion-cost first; more sibling pods on the same node first; Ready for less time first;
    newer first. (Upstream compares times in logarithmic buckets; we compare them exactly.)
    """

    def key(p: SimPod) -> tuple[float, ...]:
        cost = p.spec.annotations.get(DELETION_COST_ANNOTATION, "0")
        try:
            cost_value = float(int(cost))
        except ValueError:
            cost_value = 0.0
        return (
            0.0 if p.node is None else 1.0,
            float(_PHASE_RANK.get(p.phase, 2)),
            1.0 if p.ready else 0.0,
            cost_value,
            -float(colocated.get(p.node or "", 0)),
            -(p.ready_at if p.ready and p.ready_at is not None else 0.0),
            -p.created,
        )

    return sorted(pods, key=key)
