"""One Cluster Autoscaler loop driver for the simulator and live mode: :class:`ClusterAutoscalerDriver`.

It holds the :class:`~kubetide.cluster.autoscaler.StaticAutoscaler` and, on each :meth:`tick`, reads the
world from a :class:`WorldSource`, runs one loop, hands every event of the result to
:meth:`ClusterPort.emit_event <kubetide.model.api.ClusterPort.emit_event>` and adds the loop's counters to
its totals. It never reads a clock: its runner (:mod:`kubetide.runners.cluster_autoscaler`) calls
``tick`` every ``--scan-interval`` on the simulator's or live mode's clock, each with its own ``now``,
and ``deletions`` when a drain's next step is due. What differs between the two is only
the ports passed in (the world source, the cloud provider, the cluster port). Events go to the API on
pods, nodes, or the status ConfigMap (group-level ones too, as upstream); a port that declares it
records the structured data as well (``PortCapabilities.event_data``, the simulator's) gets every event
as the loop made it, and one that declares ConfigMap writes (``PortCapabilities.config_maps``) the
autoscaler's state and learned templates. The loop's plan is :attr:`LoopResult.plan` of each result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.capacity.objects import CapacityPort
from kubetide.cluster.clusterstate.learned_templates import TEMPLATES_CONFIG_MAP
from kubetide.cluster.clusterstate.persisted import STATE_CONFIG_MAP
from kubetide.cluster.loop.events import CA_EVENT_OBJECT
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.timing import Stopwatch
from kubetide.cluster.loop.world import CAEvent, LoopStats, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.api import ApiError, ClusterPort

__all__ = ["ClusterAutoscalerDriver", "WorldSource"]


class WorldSource(Protocol):
    """What the API server shows now, as one :class:`World` (CA's listers at the start of a loop).

    The simulator builds it from its cluster; live mode from its informers' caches. A source that
    cannot read the API server raises :class:`~kubetide.model.api.ApiError`: the driver then skips
    the loop (nothing is decided on a partial view) and the caller retries at the next tick.
    """

    def world(self) -> World:
        """A consistent snapshot: nodes, pods, PDBs, ConfigMaps and the controllers' replicas."""
        ...


class ClusterAutoscalerDriver:
    def __init__(
        self,
        source: WorldSource,
        cloud: CloudProvider,
        port: ClusterPort,
        options: AutoscalingOptions,
        *,
        now: float = 0.0,
        seed: int = 0,
        stopwatch: Stopwatch | None = None,
    ) -> None:
        """``stopwatch``: live mode's, to time CA's functions (``cluster.loop.timing``); None in the
        simulator."""
        self.source = source
        self.stopwatch = stopwatch
        self.cloud = cloud
        self.port = port
        self.options = options
        self.seed = seed
        self.stats = LoopStats()
        self.loops = 0
        self.last: LoopResult | None = None
        self.last_world: World | None = None  # what the last loop read (None: it could not read)
        self._written: dict[str, Mapping[str, str]] = {}  # ConfigMap name -> data last written
        self._event_data = port.capabilities().event_data
        self.autoscaler = self._new(now)

    def _new(self, now: float) -> StaticAutoscaler:
        return StaticAutoscaler(
            self.cloud, self.port, self.options, start_time=now, seed=self.seed, stopwatch=self.stopwatch
        )

    def restart(self, now: float) -> None:
        """A new CA process: in-memory state is gone; the cluster and the cloud keep theirs."""
        self.autoscaler = self._new(now)
        self._written = {}

    def tick(self, now: float) -> LoopResult:
        """One loop at ``now``: read the world, run, emit the events, count."""
        self.loops += 1
        try:
            world = self.source.world()
        except ApiError as exc:
            self.last_world = None
            result = LoopResult(error=f"failed to read the cluster: {exc}")
        else:
            self.last_world = world
            result = self.autoscaler.run_once(world, now)
        self.stats.add(result.stats)
        for ev in result.events:
            self._emit(ev)
        self._write_state(result)
        self._write_capacity(result)
        self.last = result
        return result

    def _write_capacity(self, result: LoopResult) -> None:
        """The capacity APIs' writes (statuses, managed PodTemplates, deletions), each on its own: one
        that fails is reported and made again by a later loop."""
        if not result.capacity_writes:
            return
        if not isinstance(self.port, CapacityPort):
            result.write_problems.append("the cluster port takes no capacity API writes")
            return
        for write in result.capacity_writes:
            try:
                self.port.write_capacity(write)
            except ApiError as exc:
                result.write_problems.append(f"{write.object} not written ({write.action}): {exc}")

    def deletions(self, now: float, *, carry: bool = True) -> LoopResult:
        """Deletions due between loops (``LoopResult.deletions_due_at``): drain and delete, nothing else.
        ``carry=False``: the caller counts ``result.deleted_between_loops`` in its metrics itself."""
        try:
            world = self.source.world()
        except ApiError as exc:
            return LoopResult(error=f"failed to read the cluster: {exc}")
        result = self.autoscaler.run_deletions(world, now, carry=carry)
        self.stats.add(result.stats)
        for ev in result.events:
            self._emit(ev)
        return result

    def _write_state(self, result: LoopResult) -> None:
        """The ConfigMaps the autoscaler owns (its state, its learned templates), each when it changed."""
        writer = self.port.capabilities().config_maps
        if writer is None:
            return
        for name, data in ((STATE_CONFIG_MAP, result.state), (TEMPLATES_CONFIG_MAP, result.templates)):
            if data is None or data == self._written.get(name):
                continue
            try:
                writer.write_config_map(self.options.namespace, name, data)
            except ApiError as exc:  # retried next loop; reported on the result
                result.write_problems.append(f"ConfigMap {self.options.namespace}/{name} not written: {exc}")
                continue
            self._written[name] = data

    def _emit(self, ev: CAEvent) -> None:
        with_data = self._event_data
        if with_data is not None:
            with_data.emit_event_with_data(ev.type, ev.reason, ev.object, ev.message, dict(ev.data))
        else:
            self.port.emit_event(ev.type, ev.reason, self.api_object(ev.object), ev.message)

    def api_object(self, obj: str) -> str:
        """The object an event is recorded on in the API server. Group-level events (``NodeGroup/<id>``,
        which names no Kubernetes kind; the group is in the message) and cluster-level ones go on the
        status ConfigMap in ``--namespace``, as upstream records them."""
        if obj.startswith("NodeGroup/") or obj == CA_EVENT_OBJECT:
            return f"ConfigMap/{self.options.namespace}/{self.options.status_config_map_name}"
        return obj
