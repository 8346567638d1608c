"""A recording :class:`~kubetide.model.api.ClusterPort` (with the ConfigMap writes of the CA driver, a
declared capability): the one in-memory cluster port of the unit tests, the benchmarks and explanations.

Like :class:`~kubetide.testing.cloud.RecordingCloud`: it holds the nodes and pods it is given and applies
each write to them as the API server would (so the next loop's world shows it), records every call,
and fails one on request::

    port = RecordingClusterPort(nodes, pods).with_failure("add_node_taint", "n2", times=1)
    ...
    assert port.calls_to("evict") == [PortCall("evict", "p1", (30,))]

- ``calls``: every write asked, in order, failed ones too (Events apart, in ``events``).
- ``log``: the writes past the injected failures, as ``(method, target, *args)``;
  :meth:`logging_cloud` adds the cloud's size changes, so one list shows both ports' writes in order.
- A write to a node it does not hold is a NotFoundError, as the API server answers; an eviction of a
  pod it does not hold is GONE. ``refuse_evictions`` / ``refuse_pods`` answer REFUSED as a PDB would.
- An evicted pod is gone at once, unless ``graceful``: then it stays Terminating (``deletion_time`` =
  ``now`` plus the grace period, as the API server sets it) until :meth:`advance` reaches that time.
- :meth:`discarding`: a port that holds no world; every write is recorded and accepted, an eviction
  answers GONE (the drain goes on to its deletion). Explanations and the loop benchmarks run on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from kubetide.model.api import ApiError, EvictionOutcome, NotFoundError, PortCapabilities
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud

__all__ = ["Listing", "PortCall", "RecordedEvent", "RecordingClusterPort"]

_ALWAYS = 1 << 62  # a failure injected without ``times`` never runs out
_DEFAULT_GRACE_S = 30  # a pod's terminationGracePeriodSeconds when the eviction gives none


@dataclass(frozen=True, slots=True)
class PortCall:
    """One write: the method, its target (a node, a pod, ``namespace/name`` of a ConfigMap) and the
    other arguments."""

    method: str
    target: str
    args: tuple[object, ...] = ()


class RecordedEvent(NamedTuple):
    type: str
    reason: str
    object: str
    message: str


class RecordingClusterPort:
    def __init__(
        self,
        nodes: dict[str, NodeView] | Iterable[NodeView] = (),
        pods: dict[str, Pod] | Iterable[Pod] = (),
        *,
        graceful: bool = False,
    ) -> None:
        # A dict is held as given (a test's world may share it); other iterables are keyed by name.
        self.nodes: dict[str, NodeView] = nodes if isinstance(nodes, dict) else {n.name: n for n in nodes}
        self.pods: dict[str, Pod] = pods if isinstance(pods, dict) else {p.name: p for p in pods}
        self.graceful = graceful
        self.now = 0.0
        self.refuse_evictions = False
        self.refuse_pods: set[str] = set()  # evictions refused for these pods only
        self.calls: list[PortCall] = []
        self.log: list[tuple[object, ...]] = []
        self.events: list[RecordedEvent] = []
        self.config_maps: dict[tuple[str, str], dict[str, str]] = {}
        # Each node's taints after every taint write, in order (what a watch would have seen).
        self.taint_calls: list[tuple[str, tuple[Taint, ...]]] = []
        self.evicted: list[str] = []  # evictions accepted
        self.grace_periods: list[tuple[str, int | None]] = []  # (pod, gracePeriodSeconds) accepted
        self.evictions_at: list[tuple[str, float]] = []  # every eviction asked: (pod, now)
        self._holds_world = True
        self._failures: dict[tuple[str, str | None], tuple[int, Exception | None]] = {}

    @classmethod
    def discarding(cls) -> RecordingClusterPort:
        port = cls()
        port._holds_world = False
        return port

    # -- building and reading

    def with_failure(
        self, method: str, target: str | None = None, *, times: int = _ALWAYS, error: Exception | None = None
    ) -> RecordingClusterPort:
        """``method`` (on ``target`` only, if given) raises ``error`` (an ApiError by default), ``times``
        times; the call is recorded in ``calls`` and not made."""
        self._failures[(method, target)] = (times, error)
        return self

    def calls_to(self, method: str) -> list[PortCall]:
        return [c for c in self.calls if c.method == method]

    def listing(self) -> Listing:
        """The nodes and pods held, as a watch lists them (Escalator's world port)."""
        return Listing(self)

    def logging_cloud(self, cloud: RecordingCloud) -> RecordingCloud:
        """Log the cloud's successful size changes into ``log`` beside the API writes, in order."""
        cloud.on_scale_up(lambda group, delta: self.log.append(("increase_size", group, delta)))
        cloud.on_scale_down(lambda group, node: self.log.append(("cloud_delete", group, node)))
        return cloud

    def advance(self, now: float) -> None:
        """Time passes to ``now``: pods whose grace period is over are gone."""
        self.now = now
        for name in [
            n for n, p in self.pods.items() if p.deletion_time is not None and p.deletion_time <= now
        ]:
            del self.pods[name]

    # -- ClusterPort

    def add_node_taint(self, node: str, taint: Taint) -> None:
        if self._call("add_node_taint", node, taint):
            kept = tuple(t for t in self._node(node).taints if (t.key, t.effect) != (taint.key, taint.effect))
            self._set_taints(node, (*kept, taint))

    def remove_node_taint(self, node: str, key: str) -> None:
        if self._call("remove_node_taint", node, key):
            self._set_taints(node, tuple(t for t in self._node(node).taints if t.key != key))

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        if self._call("set_node_unschedulable", node, unschedulable):
            self.nodes[node] = replace(self._node(node), unschedulable=unschedulable)

    def annotate_node(self, node: str, annotations: Mapping[str, str | None]) -> None:
        if self._call("annotate_node", node, dict(annotations)):
            merged = dict(self._node(node).annotations)
            for key, value in annotations.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            self.nodes[node] = replace(self._node(node), annotations=merged)

    def delete_node(self, node: str) -> None:
        self._call("delete_node", node)
        self.nodes.pop(node, None)  # a node already gone is success: deletion is idempotent

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
        grace = _DEFAULT_GRACE_S if grace_period_s is None else grace_period_s
        if not self.graceful or grace <= 0:
            del self.pods[pod.name]
        else:
            end = self.now + grace
            if current.deletion_time is None or end < current.deletion_time:
                self.pods[pod.name] = replace(current, deletion_time=end)
        return EvictionOutcome.EVICTED

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.events.append(RecordedEvent(type_, str(reason), obj, message))

    def capabilities(self) -> PortCapabilities:
        return PortCapabilities(config_maps=self)

    # -- the ConfigMaps the autoscaler owns (a declared capability)

    def write_config_map(self, namespace: str, name: str, data: Mapping[str, str]) -> None:
        self._call("write_config_map", f"{namespace}/{name}", dict(data))
        self.config_maps[(namespace, name)] = dict(data)

    # -- helpers

    def _call(self, method: str, target: str, *args: object) -> bool:
        """Record the call and raise an injected failure; True when it is applied to the held world."""
        self.calls.append(PortCall(method, target, args))
        for key in ((method, target), (method, None)):
            left, error = self._failures.get(key, (0, None))
            if left > 0:
                self._failures[key] = (left - 1, error)
                raise error or ApiError(
                    f"{method} {target}: the server is currently unable to handle the request"
                )
        self.log.append((method, target, *args))
        return self._holds_world

    def _node(self, name: str) -> NodeView:
        node = self.nodes.get(name)
        if node is None:
            raise NotFoundError(f'nodes "{name}" not found')
        return node

    def _set_taints(self, name: str, taints: tuple[Taint, ...]) -> None:
        self.nodes[name] = replace(self._node(name), taints=taints)
        self.taint_calls.append((name, taints))


@dataclass(frozen=True)
class Listing:
    """Escalator's world port (``EscalatorWorldSource``) over a port's held nodes and pods."""

    port: RecordingClusterPort

    def nodes(self) -> Sequence[NodeView]:
        return tuple(self.port.nodes.values())

    def pods(self) -> Sequence[Pod]:
        return tuple(self.port.pods.values())
