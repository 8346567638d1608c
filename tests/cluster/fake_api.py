"""A recording fake of :class:`kubetide.model.api.ClusterPort` for loop tests.

It applies every write to the nodes and pods it is given (so the next loop's world shows them), records
each call in order, and fails on request: ``fail("add_node_taint", node="n2")`` makes that call raise
``ApiError`` (``times`` limits how often), ``refuse_evictions`` answers REFUSED as a PDB would. An
evicted pod is gone at once, unless ``graceful``: then it stays, Terminating (``deletion_time`` = ``now``
plus the eviction's grace period, as the API server sets it), until :meth:`FakeClusterApi.advance`
reaches that time, as a kubelet would stop it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from kubetide.model.api import ApiError, EvictionOutcome, NotFoundError
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint


@dataclass(frozen=True)
class ApiCall:
    method: str
    target: str
    args: tuple[object, ...] = ()


@dataclass
class FakeClusterApi:
    nodes: dict[str, NodeView] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    refuse_evictions: bool = False
    calls: list[ApiCall] = field(default_factory=list)
    events: list[tuple[str, str, str, str]] = field(default_factory=list)
    # Each node's taints after every taint write, in order (what a watch would have seen).
    taint_calls: list[tuple[str, tuple[Taint, ...]]] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    grace_periods: list[tuple[str, int | None]] = field(default_factory=list)  # (pod, gracePeriodSeconds)
    evictions_at: list[tuple[str, float]] = field(default_factory=list)  # every eviction asked: (pod, now)
    refuse_pods: set[str] = field(default_factory=set)  # evictions refused for these pods only
    graceful: bool = False
    now: float = 0.0
    _failures: dict[tuple[str, str | None], int] = field(default_factory=dict)

    def fail(self, method: str, *, node: str | None = None, times: int = 1_000_000) -> FakeClusterApi:
        self._failures[(method, node)] = times
        return self

    def calls_to(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method == method]

    def _call(self, method: str, target: str, *args: object) -> None:
        self.calls.append(ApiCall(method, target, args))
        for key in ((method, target), (method, None)):
            left = self._failures.get(key, 0)
            if left > 0:
                self._failures[key] = left - 1
                raise ApiError(f"{method} {target}: the server is currently unable to handle the request")

    def _node(self, name: str) -> NodeView:
        node = self.nodes.get(name)
        if node is None:
            raise NotFoundError(f'nodes "{name}" not found')
        return node

    def _set_taints(self, name: str, taints: tuple[Taint, ...]) -> None:
        self.nodes[name] = replace(self._node(name), taints=taints)
        self.taint_calls.append((name, taints))

    # -- ClusterPort
    def add_node_taint(self, node: str, taint: Taint) -> None:
        self._call("add_node_taint", node, taint)
        current = self._node(node).taints
        kept = tuple(t for t in current if (t.key, t.effect) != (taint.key, taint.effect))
        self._set_taints(node, (*kept, taint))

    def remove_node_taint(self, node: str, key: str) -> None:
        self._call("remove_node_taint", node, key)
        self._set_taints(node, tuple(t for t in self._node(node).taints if t.key != key))

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        self._call("set_node_unschedulable", node, unschedulable)
        self.nodes[node] = replace(self._node(node), unschedulable=unschedulable)

    def annotate_node(self, node: str, annotations: Mapping[str, str | None]) -> None:
        self._call("annotate_node", node, dict(annotations))
        current = dict(self._node(node).annotations)
        for k, v in annotations.items():
            if v is None:
                current.pop(k, None)
            else:
                current[k] = v
        self.nodes[node] = replace(self._node(node), annotations=current)

    def delete_node(self, node: str) -> None:
        self._call("delete_node", node)
        self.nodes.pop(node, None)

    def evict(self, pod: Pod, grace_period_s: int | None = None) -> EvictionOutcome:
        self._call("evict", pod.name, grace_period_s)
        self.evictions_at.append((pod.name, self.now))
        current = self.pods.get(pod.name)
        refused = self.refuse_evictions or pod.name in self.refuse_pods
        if refused and (current is None or current.deletion_time is None):  # a PDB asks not for those
            return EvictionOutcome.REFUSED
        if current is None:
            return EvictionOutcome.GONE
        self.evicted.append(pod.name)
        self.grace_periods.append((pod.name, grace_period_s))
        grace = 30 if grace_period_s is None else grace_period_s
        if not self.graceful or grace <= 0:
            del self.pods[pod.name]
        else:
            end = self.now + grace
            if current.deletion_time is None or end < current.deletion_time:
                self.pods[pod.name] = replace(current, deletion_time=end)
        return EvictionOutcome.EVICTED

    def advance(self, now: float) -> None:
        """Time passes to ``now``: pods whose grace period is over are gone."""
        self.now = now
        for name in [
            n for n, p in self.pods.items() if p.deletion_time is not None and p.deletion_time <= now
        ]:
            del self.pods[name]

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.events.append((type_, reason, obj, message))
