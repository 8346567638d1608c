"""A recording fake of :class:`kubetide.model.api.ClusterPort` for loop tests.

It applies every write to the nodes and pods it is given (so the next loop's world shows them), records
each call in order, and fails on request: ``fail("add_node_taint", node="n2")`` makes that call raise
``ApiError`` (``times`` limits how often), ``refuse_evictions`` answers REFUSED as a PDB would.
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

    def evict(self, pod: Pod) -> EvictionOutcome:
        self._call("evict", pod.name)
        if self.refuse_evictions:
            return EvictionOutcome.REFUSED
        if self.pods.pop(pod.name, None) is None:
            return EvictionOutcome.GONE
        self.evicted.append(pod.name)
        return EvictionOutcome.EVICTED

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.events.append((type_, reason, obj, message))
