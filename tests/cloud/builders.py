"""Builders for simulated-cloud tests: scenario node groups, a recording listener, a started cloud."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetide.clock import VirtualClock
from kubetide.model.node import NodeView
from kubetide.sim.cloud.listener import NodeAddress
from kubetide.sim.cloud.simulated import SimulatedCloud
from kubetide.sim.rng import RngFactory
from kubetide.sim.scenario import BUILTIN_CATALOG, NodeGroupSpec


def group(name: str = "ng", **fields: Any) -> NodeGroupSpec:
    """A scenario node group (m5.large, 0..10, delays 60/15/10s) with ``fields`` on top."""
    doc: dict[str, Any] = {"name": name, "instanceType": "m5.large", "minSize": 0, "maxSize": 10}
    doc.update(fields)
    return NodeGroupSpec.model_validate(doc)


@dataclass
class Event:
    t: float
    source: str
    reason: str
    obj: str
    message: str
    data: dict[str, object]


@dataclass
class Listener:
    """Records events and keeps the Node objects as the simulated cluster would."""

    events: list[Event] = field(default_factory=list)
    nodes: dict[str, NodeView] = field(default_factory=dict)
    ready: dict[str, bool] = field(default_factory=dict)
    addresses: dict[str, tuple[NodeAddress, ...]] = field(default_factory=dict)
    instance_of: dict[str, str] = field(default_factory=dict)

    def cloud_event(
        self, t: float, reason: str, obj: str, message: str, data: Mapping[str, object], /
    ) -> None:
        self.events.append(Event(t, "cloud", reason, obj, message, dict(data)))

    def kubelet_event(
        self, t: float, reason: str, obj: str, message: str, data: Mapping[str, object], /
    ) -> None:
        self.events.append(Event(t, "kubelet", reason, obj, message, dict(data)))

    def register_node(
        self, t: float, node: NodeView, group: str, instance: str, addresses: Sequence[NodeAddress], /
    ) -> None:
        assert node.name not in self.nodes, f"{node.name} registered twice"
        self.nodes[node.name] = node
        self.ready[node.name] = node.ready
        self.addresses[node.name] = tuple(addresses)
        self.instance_of[node.name] = instance

    def set_node_ready(self, t: float, node_name: str, ready: bool, /) -> None:
        assert node_name in self.nodes, f"{node_name} is not registered"
        self.ready[node_name] = ready

    def node_deleted(self, t: float, node_name: str, /) -> None:
        assert node_name in self.nodes, f"{node_name} is not registered"
        del self.nodes[node_name]
        del self.ready[node_name]

    def reasons(self, source: str | None = None) -> list[str]:
        return [e.reason for e in self.events if source is None or e.source == source]

    def of(self, reason: str) -> list[Event]:
        return [e for e in self.events if e.reason == reason]

    def ready_nodes(self) -> list[str]:
        return sorted(name for name, ok in self.ready.items() if ok)


@dataclass
class World:
    engine: VirtualClock
    cloud: SimulatedCloud
    listener: Listener

    def run(self, until: float) -> None:
        self.engine.run(until)

    def ng(self, name: str = "ng") -> Any:
        return self.cloud.node_group(name)


def world(
    *groups: NodeGroupSpec, seed: int = 0, termination_delay: float = 30.0, start: bool = True
) -> World:
    engine = VirtualClock()
    listener = Listener()
    cloud = SimulatedCloud.from_scenario(
        engine,
        groups or (group(),),
        BUILTIN_CATALOG,
        RngFactory(seed),
        listener,
        termination_delay=termination_delay,
    )
    if start:
        cloud.start()
    return World(engine, cloud, listener)


def fake_node(provider_id: str, name: str = "") -> NodeView:
    """What CA passes for an unregistered or failed instance: a fake node carrying the instance id."""
    return NodeView(name=name or provider_id, provider_id=provider_id)
