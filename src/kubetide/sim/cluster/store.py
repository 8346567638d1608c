"""The simulated API server's object store: it holds every object, answers the reads, takes the
writes, and keeps the change log of the pods.

It holds the Nodes the cloud registered (:class:`SimNode`), every live pod, the workloads, HPAs,
PodDisruptionBudgets, ConfigMaps and the capacity APIs' objects (:mod:`.capacity`), and the pending pods as an index. Readers that rebuild what they
derived from the pods subscribe to the change log (:meth:`ObjectStore.watch_pods`: ADDED, CHANGED,
REMOVED in order, as a watch streams them) instead of going over every pod again; the node versions
tell them when the Nodes changed. The store decides nothing: the kubelet, the node lifecycle
controller, the scheduler, the controllers and the garbage collector write through it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubetide.model.hpa import HPA
from kubetide.model.node import NodeView
from kubetide.model.selectors import LabelSelector
from kubetide.sim.cluster.capacity import CapacityStore
from kubetide.sim.cluster.pdb import DisruptionBudget
from kubetide.sim.cluster.pods import ADDED, REMOVED, PodLog, SimPod
from kubetide.sim.cluster.workloads import Workload

__all__ = ["EventSink", "ObjectStore", "PodStats", "SimNode"]


class EventSink(Protocol):
    def emit(
        self,
        t: float,
        source: str,
        reason: str,
        object: str,
        message: str,
        data: dict[str, Any] | None = None,
    ) -> None: ...


@dataclass(eq=False)
class SimNode:
    view: NodeView  # as registered (no lifecycle taints)
    group: str
    instance: str
    registered_at: float
    slot: int
    ready: bool = False
    pods: dict[str, SimPod] = field(default_factory=dict)
    not_ready_since: float | None = None  # when a Ready node last turned NotReady


@dataclass
class PodStats:
    """Accounting for the summary: pending time integrated exactly over every change."""

    pending: int = 0
    max_pending: int = 0
    window_max_pending: int = 0  # the most pending since the last timeline row (see take_window_max)
    pending_seconds: float = 0.0
    last_change: float = 0.0
    time_to_schedule: list[float] = field(default_factory=list)

    def update(self, now: float, delta: int) -> None:
        self.pending_seconds += self.pending * (now - self.last_change)
        self.last_change = now
        self.pending += delta
        self.max_pending = max(self.max_pending, self.pending)
        self.window_max_pending = max(self.window_max_pending, self.pending)

    def take_window_max(self) -> int:
        """The most pods pending at once since the previous call (a timeline row stands for its step,
        so its peak is not lost between samples); the next window starts from what pends now."""
        peak = max(self.window_max_pending, self.pending)
        self.window_max_pending = self.pending
        return peak


class ObjectStore:
    def __init__(self) -> None:
        self.nodes: dict[str, SimNode] = {}
        self.pods: dict[str, SimPod] = {}  # every live pod by namespace/name
        self.workloads: dict[str, Workload] = {}
        self.hpas: dict[str, HPA] = {}
        self.pdbs: dict[str, DisruptionBudget] = {}
        self.config_maps: dict[str, dict[str, str]] = {}
        self.capacity = CapacityStore()  # CapacityBuffers, ProvisioningRequests, CapacityQuotas, PodTemplates
        self.stats = PodStats()
        self.pending: dict[str, SimPod] = {}
        # Pending pods with spec.nodeName whose Node does not exist (yet): the scheduler never sees
        # them; the kubelet of that node admits them when it registers. A subset of ``pending``.
        self.awaiting_node: dict[str, SimPod] = {}
        self.uids = 0  # pods created (each gets the next uid)
        self.nodes_version = 0  # bumped when a node is added, removed, or changes readiness
        self.node_views_version = 0  # and this one also when a node's taints change (the world's list)
        self._pod_logs: list[PodLog] = []  # shared with every pod (SimPod.logs): see watch_pods
        self._selector_index: dict[tuple[str, LabelSelector], Workload] = {}
        self._selector_index_size = -1
        self.selectors_dirty = True  # a workload or bare pod came, went or changed its labels
        self._selector_memo: dict[int, tuple[LabelSelector, str, Workload | None]] = {}

    # --- writes -----------------------------------------------------------------------------------

    def next_uid(self) -> str:
        self.uids += 1
        return f"uid-{self.uids}"

    def add_pod(self, pod: SimPod) -> None:
        self.pods[pod.key] = pod
        pod.logs = self._pod_logs
        for log in self._pod_logs:
            log.append((ADDED, pod))

    def remove_pod(self, pod: SimPod) -> None:
        if self.pods.pop(pod.key, None) is not None:
            for log in self._pod_logs:
                log.append((REMOVED, pod))

    def add_pending(self, pod: SimPod, now: float) -> None:
        self.pending[pod.key] = pod
        self.stats.update(now, +1)

    def drop_pending(self, pod: SimPod, now: float) -> bool:
        """No longer pending (bound, failed or deleted); False when it was not."""
        if pod.key not in self.pending:
            return False
        del self.pending[pod.key]
        self.awaiting_node.pop(pod.key, None)
        self.stats.update(now, -1)
        return True

    def touch(self, pod: SimPod) -> None:
        """A pod changed: its owner's version moves on (caches of its pod list are stale)."""
        owner = self.workloads.get(pod.owner or "")
        if owner is not None:
            owner.version += 1

    def nodes_changed(self, *, views_only: bool = False) -> None:
        """A node came, went or changed readiness; or, ``views_only``, only its taints changed."""
        if not views_only:
            self.nodes_version += 1
        self.node_views_version += 1

    # --- reads ------------------------------------------------------------------------------------

    def watch_pods(self) -> PodLog:
        """A log of every change to ``pods`` from now on, in order: (ADDED | CHANGED | REMOVED, pod).
        The watcher empties it as it reads it, so a reader of the pods can update what it built
        from them instead of going over all of them again."""
        log: PodLog = []
        self._pod_logs.append(log)
        return log

    @property
    def pending_pods(self) -> Mapping[str, SimPod]:
        return self.pending

    def pods_in(self, namespace: str) -> Iterator[SimPod]:
        return (p for p in self.pods.values() if p.spec.namespace == namespace)

    def workload_for_selector(self, namespace: str, selector: LabelSelector) -> Workload | None:
        """The workload in ``namespace`` whose selector is exactly ``selector`` (what an HPA's scale
        target reports) *and whose pods are the only ones it matches*, so its pod list is the
        selector's answer; None when pods of another workload or bare pods match too (the HPA then
        counts them all, as upstream's lister does). Rebuilt when workloads or bare pods change."""
        if self._selector_index_size != len(self.workloads) or self.selectors_dirty:
            self._selector_index = self._exclusive_selectors()
            self._selector_index_size = len(self.workloads)
            self.selectors_dirty = False
            self._selector_memo = {}
        # By the selector object's identity (HPAs pass the same one every sync): equal selectors that
        # are distinct objects compare field by field, which costs more than the rest of the lookup.
        memo = self._selector_memo.get(id(selector))
        if memo is not None and memo[0] is selector and memo[1] == namespace:
            return memo[2]
        found = self._selector_index.get((namespace, selector))
        self._selector_memo[id(selector)] = (selector, namespace, found)
        return found

    def _exclusive_selectors(self) -> dict[tuple[str, LabelSelector], Workload]:
        bare = [p.spec for p in self.pods.values() if p.owner is None]
        out: dict[tuple[str, LabelSelector], Workload] = {}
        for w in self.workloads.values():
            shared = any(
                other is not w
                and other.namespace == w.namespace
                and w.selector.matches(other.template.view.labels)
                for other in self.workloads.values()
            ) or any(p.namespace == w.namespace and w.selector.matches(p.labels) for p in bare)
            if not shared:
                out[(w.namespace, w.selector)] = w
        return out
