"""The simulated cloud: a ``CloudProvider`` whose machines live on the simulator's virtual clock.

Built from the scenario's resolved node groups (scenario spec §3), it provisions instances with the
group's delays, registers their Nodes with the simulated cluster through a
:class:`~kubetide.sim.cloud.listener.CloudListener`, applies the group's faults (§3.1), and bills.

Decisions:

- **Start.** ``start()`` (once, at the engine's current time) creates each group's ``initialSize``
  machines already running, registered and Ready, emitting ``NodeRegistered`` and ``NodeReady`` for
  them but no cloud event; faults never apply to them. It also arms the fault timers.
- **Events.** The cloud plays the kubelets too, so it emits both ``cloud`` and ``kubelet`` events.
- **Billing.** An instance is billed from the moment it runs (``InstanceCreated``) until it is
  terminated, whether or not its Node registered; failed or held-back creations cost nothing.
  ``cost = node_seconds × pricePerHour / 3600`` per group.
- **Pricing.** ``pricing()`` prices nodes at their group's ``pricePerHour`` and pods per requested
  resource (:mod:`kubetide.sim.cloud.pricing`), for the price expander.
- **Callers.** ``client(name)`` gives a handle whose deletions are attributed to ``name`` (the
  ``reason`` of ``InstanceTerminated``); the cloud itself is a handle for caller ``"api"``.
- **Faults.** Requests held back by a silent stockout count in the target and are launched when it
  ends (an ASG keeps working towards its desired size) unless withdrawn by ``decrease_target_size``;
  failed creations of an error stockout stay listed until deleted or dropped by a target decrease.
- **Nodes** are named ``<group>-<n>`` (stable across seeds); instance ids are seeded. The cloud
  sets the Ready condition only; taints that follow from it (``node.kubernetes.io/not-ready``) are
  the cluster's node lifecycle controller's business.
- **Deletions** take ``termination_delay`` (default 30s) from the call to the instance's termination,
  during which it is listed as Deleting and still billed.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Mapping, Sequence
from itertools import compress

from kubetide.clock import VirtualClock
from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import BulkNodeLookup, CloudProvider, NodeGroup, PricingModel
from kubetide.model.node import NodeView
from kubetide.sim.cloud.disruptions import arm_not_ready_faults, delete_node_objects
from kubetide.sim.cloud.faults import FaultBook
from kubetide.sim.cloud.group import SimGroup
from kubetide.sim.cloud.instances import InstanceNamer, parse_provider_id
from kubetide.sim.cloud.listener import CloudListener
from kubetide.sim.cloud.nodegroup import SimNodeGroup
from kubetide.sim.cloud.pricing import SimPricing
from kubetide.sim.rng import RngFactory
from kubetide.sim.scenario.catalog import InstanceType
from kubetide.sim.scenario.nodegroups import Fault, NodeGroupSpec
from kubetide.sim.scenario.resolved import ResolvedNodeGroup, resolve_node_group

# The node label CA reads as GPULabel: the simulated machines are AWS instance types (its catalog).
GPU_LABEL = "k8s.amazonaws.com/accelerator"
_PROVIDER_ID = operator.attrgetter("provider_id")

__all__ = ["DEFAULT_TERMINATION_DELAY", "PROVIDER_NAME", "SimulatedCloud"]

PROVIDER_NAME = "sim"
DEFAULT_TERMINATION_DELAY = 30.0


class _Cloud:
    """The shared state behind every caller's handle."""

    def __init__(
        self,
        engine: VirtualClock,
        groups: Sequence[tuple[ResolvedNodeGroup, Sequence[Fault]]],
        rngs: RngFactory,
        listener: CloudListener,
        termination_delay: float,
    ) -> None:
        self.engine = engine
        self.started = False
        self.groups: dict[str, SimGroup] = {}
        self.owners: dict[str, str] = {}  # live instance id -> its group's name
        self.owners_by_provider_id: dict[str, str] = {}  # the same by providerID (bulk lookups)
        taken: set[str] = set()
        for index, (spec, faults) in enumerate(groups):
            if spec.name in self.groups:
                raise ValueError(f"duplicate node group {spec.name!r}")
            rng = rngs.stream(f"cloud/{spec.name}")
            namer = InstanceNamer(spec.name, index, spec.zone, rng, taken)
            book = FaultBook(faults)
            self.groups[spec.name] = SimGroup(
                spec,
                book,
                namer,
                engine,
                listener,
                rng,
                termination_delay,
                self.owners,
                self.owners_by_provider_id,
            )


class SimulatedCloud:
    """``CloudProvider`` of the simulator. ``groups`` pairs each resolved group with its scenario faults."""

    def __init__(
        self,
        engine: VirtualClock,
        groups: Sequence[tuple[ResolvedNodeGroup, Sequence[Fault]]],
        rngs: RngFactory,
        listener: CloudListener,
        *,
        termination_delay: float = DEFAULT_TERMINATION_DELAY,
        caller: str = "api",
    ) -> None:
        self._attach(_Cloud(engine, groups, rngs, listener, termination_delay), caller)

    @classmethod
    def from_scenario(
        cls,
        engine: VirtualClock,
        groups: Sequence[NodeGroupSpec],
        catalog: Mapping[str, InstanceType],
        rngs: RngFactory,
        listener: CloudListener,
        *,
        termination_delay: float = DEFAULT_TERMINATION_DELAY,
    ) -> SimulatedCloud:
        """From ``scenario.spec.nodeGroups`` and ``scenario.catalog``: resolves each group."""
        resolved = [(resolve_node_group(g, catalog), g.faults) for g in groups]
        return cls(engine, resolved, rngs, listener, termination_delay=termination_delay)

    def _attach(self, cloud: _Cloud, caller: str, only: Collection[str] | None = None) -> None:
        self._cloud = cloud
        self._caller = caller
        self._handles = {
            name: SimNodeGroup(group, self._now, caller)
            for name, group in cloud.groups.items()
            if only is None or name in only
        }

    def _now(self) -> float:
        return self._cloud.engine.now

    def client(self, caller: str, only: Collection[str] | None = None) -> SimulatedCloud:
        """A handle on the same cloud whose calls are attributed to ``caller`` (e.g. "cluster-autoscaler").

        ``only``: the groups the caller manages, as CA's ``--nodes`` restricts a provider; the others
        are not listed and their nodes belong to no group (not autoscaled) for this caller.
        """
        handle = object.__new__(SimulatedCloud)
        handle._attach(self._cloud, caller, only)
        return handle

    def start(self) -> None:
        """Create the initial machines and arm the fault timers, at the engine's current time. Once."""
        if self._cloud.started:
            raise RuntimeError("the simulated cloud is already started")
        self._cloud.started = True
        engine = self._cloud.engine
        for group in self._cloud.groups.values():
            group.start_initial(engine.now)
            for end in group.faults.stockout_ends():
                if end >= engine.now:
                    engine.at(end, group.reconcile, name=f"cloud/stockout-end/{group.spec.name}")
            arm_not_ready_faults(group, engine)

    # --- CloudProvider

    def name(self) -> str:
        return PROVIDER_NAME

    def node_groups(self) -> list[NodeGroup]:
        return list(self._handles.values())

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        short_id = parse_provider_id(node.provider_id)
        if short_id is None:
            return None
        name = self._cloud.owners.get(short_id)
        return self._handles.get(name) if name is not None else None

    def has_instance(self, node: NodeView) -> bool:
        short_id = parse_provider_id(node.provider_id)
        if short_id is None:
            raise CloudProviderError(f"node {node.name} has no sim:// providerID ({node.provider_id!r})")
        return short_id in self._cloud.owners

    # --- BulkNodeLookup: the per-node answers above, for every node in one call

    def bulk_lookup(self) -> BulkNodeLookup:
        return self

    # A live instance's providerID is the one it was made with, so the lookups by providerID are
    # exact for it; the other nodes (a providerID written another way, or no instance) take the
    # per-node path, node by node.

    def node_group_ids(self, nodes: Sequence[NodeView]) -> list[str | None]:
        pids = list(map(_PROVIDER_ID, nodes))
        names: list[str | None] = list(map(self._cloud.owners_by_provider_id.get, pids))
        if not all(names):
            for i in compress(range(len(names)), map(operator.not_, names)):
                group = self.node_group_for_node(nodes[i])
                names[i] = group.id() if group is not None else None
        if len(self._handles) < len(self._cloud.groups):  # a caller managing some groups only
            handles = self._handles
            return [name if name in handles else None for name in names]
        return names

    def has_instances(self, nodes: Sequence[NodeView]) -> list[bool]:
        pids = list(map(_PROVIDER_ID, nodes))
        found = list(map(self._cloud.owners_by_provider_id.__contains__, pids))
        if not all(found):
            for i in compress(range(len(found)), map(operator.not_, found)):
                found[i] = self.has_instance(nodes[i])  # raises where it cannot tell
        return found

    def pricing(self) -> PricingModel:
        return SimPricing(self._cloud.groups)

    def gpu_label(self) -> str:
        return GPU_LABEL

    def refresh(self) -> None:
        pass  # no caches: every answer is read from the live state

    def cleanup(self) -> None:
        pass

    # --- simulator-only accessors

    def node_group(self, name: str) -> SimNodeGroup:
        """The handle for group ``name``; KeyError if there is none."""
        return self._handles[name]

    def delete_node_objects(self, group: str, count: int) -> list[str]:
        """The ``deleteNode`` action: delete ``count`` Node objects of ``group`` (``kubectl delete node``);
        the machines keep running and stay unregistered. Returns the deleted Node names."""
        return delete_node_objects(self._cloud.groups[group], count, self._now())

    def attach_instances(self, group: str, count: int) -> list[str]:
        """The ``attachInstance`` action: ``count`` machines attached to ``group`` by hand (no Node will
        register; the group's target rises, up to its maximum). Returns their instance ids."""
        return [inst.provider_id for inst in self._cloud.groups[group].attach(self._now(), count)]

    def target_sizes(self) -> dict[str, int]:
        return {name: group.target for name, group in self._cloud.groups.items()}

    def billing(self, now: float) -> dict[str, tuple[float, float]]:
        """``{group: (node_seconds, cost)}`` up to ``now`` (not before the last event processed)."""
        out: dict[str, tuple[float, float]] = {}
        for name, group in self._cloud.groups.items():
            seconds = group.node_seconds(now)
            out[name] = (seconds, seconds * group.spec.price_per_hour / 3600.0)
        return out

    def cost_per_hour(self) -> float:
        """What the machines running now cost per hour (the timeline's ``cost_per_hour``)."""
        return sum(g.running_count() * g.spec.price_per_hour for g in self._cloud.groups.values())

    def cost_per_hour_by_group(self) -> dict[str, float]:
        return {name: g.running_count() * g.spec.price_per_hour for name, g in self._cloud.groups.items()}

    def prices(self) -> Mapping[str, float]:
        return {name: group.spec.price_per_hour for name, group in self._cloud.groups.items()}


def _conforms(cloud: SimulatedCloud, group: SimNodeGroup) -> tuple[CloudProvider, NodeGroup]:
    return cloud, group  # mypy checks that both implement the port
