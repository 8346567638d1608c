"""A recording ``ClusterPort`` that is also the Escalator's world: writes change the nodes it lists.

Every method of :class:`kubetide.model.api.ClusterPort` is implemented and recorded in ``calls`` (one
shared ``log`` also takes the cloud's calls when :func:`wire_cloud` is used, so tests can check the
order across both ports). ``fail(method, node)`` makes a chosen call raise ApiError (or any error).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from kubetide.model.api import ApiError, EvictionOutcome, NotFoundError
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud


@dataclass(frozen=True, slots=True)
class PortCall:
    method: str
    target: str  # node name, pod name, or the event's object
    args: tuple[object, ...] = ()


@dataclass
class FakeCluster:
    node_list: list[NodeView] = field(default_factory=list)
    pod_list: list[Pod] = field(default_factory=list)
    calls: list[PortCall] = field(default_factory=list)
    log: list[tuple[object, ...]] = field(default_factory=list)  # API and cloud writes, in order
    failures: dict[tuple[str, str | None], Exception] = field(default_factory=dict)

    # --- the world (EscalatorWorldSource)

    def nodes(self) -> Sequence[NodeView]:
        return tuple(self.node_list)

    def pods(self) -> Sequence[Pod]:
        return tuple(self.pod_list)

    # --- builder and inspection

    def fail(self, method: str, node: str | None = None, error: Exception | None = None) -> FakeCluster:
        self.failures[(method, node)] = error or ApiError(f"{method} failed (injected)")
        return self

    def calls_to(self, method: str) -> list[PortCall]:
        return [c for c in self.calls if c.method == method]

    def node(self, name: str) -> NodeView:
        return next(n for n in self.node_list if n.name == name)

    @property
    def events(self) -> list[PortCall]:
        return self.calls_to("emit_event")

    def _record(self, method: str, target: str, *args: object) -> None:
        self.calls.append(PortCall(method, target, args))
        error = self.failures.get((method, target)) or self.failures.get((method, None))
        if error is not None:
            raise error
        if method != "emit_event":
            self.log.append((method, target, *args))

    def _update(self, name: str, **changes: object) -> None:
        for i, n in enumerate(self.node_list):
            if n.name == name:
                self.node_list[i] = replace(n, **changes)  # type: ignore[arg-type]
                return
        raise NotFoundError(f'nodes "{name}" not found')

    # --- ClusterPort

    def add_node_taint(self, node: str, taint: Taint) -> None:
        self._record("add_node_taint", node, taint)
        kept = tuple(t for t in self.node(node).taints if (t.key, t.effect) != (taint.key, taint.effect))
        self._update(node, taints=(*kept, taint))

    def remove_node_taint(self, node: str, key: str) -> None:
        self._record("remove_node_taint", node, key)
        self._update(node, taints=tuple(t for t in self.node(node).taints if t.key != key))

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        self._record("set_node_unschedulable", node, unschedulable)
        self._update(node, unschedulable=unschedulable)

    def annotate_node(self, node: str, annotations: Mapping[str, str | None]) -> None:
        self._record("annotate_node", node, dict(annotations))
        merged = dict(self.node(node).annotations)
        for k, v in annotations.items():
            if v is None:
                merged.pop(k, None)
            else:
                merged[k] = v
        self._update(node, annotations=merged)

    def delete_node(self, node: str) -> None:
        self._record("delete_node", node)
        self.node_list = [n for n in self.node_list if n.name != node]

    def evict(self, pod: Pod, grace_period_s: int | None = None) -> EvictionOutcome:
        self._record("evict", pod.name)
        self.pod_list = [p for p in self.pod_list if p.name != pod.name]
        return EvictionOutcome.EVICTED

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self._record("emit_event", obj, type_, str(reason), message)


def wire_cloud(cluster: FakeCluster, cloud: RecordingCloud) -> RecordingCloud:
    """Log the cloud's successful size changes into ``cluster.log`` beside the API writes."""
    cloud.on_scale_up(lambda group, delta: cluster.log.append(("increase_size", group, delta)))
    cloud.on_scale_down(lambda group, node: cluster.log.append(("cloud_delete", group, node)))
    return cloud
