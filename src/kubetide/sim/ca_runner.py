"""The Cluster Autoscaler inside the simulation: the one loop driver
(:class:`~kubetide.cluster.driver.ClusterAutoscalerDriver`) scheduled every ``--scan-interval``, on the
simulated world and cluster port (:mod:`kubetide.sim.ports`).

The loop acts through a ``client("cluster-autoscaler")`` handle on the simulated cloud, so the cloud
attributes deletions to CA; the handle lists only the groups CA manages (its ``--nodes``, or every group
the batch autoscaler does not own), so CA leaves the others alone as a real one would.
"""

from __future__ import annotations

from collections.abc import Collection

from kubetide.cluster.driver import ClusterAutoscalerDriver
from kubetide.cluster.loop.world import LoopResult, LoopStats, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.status import ClusterAutoscalerStatus, render_status_config_map
from kubetide.sim.cloud.simulated import SimulatedCloud
from kubetide.sim.cluster.cluster import EventSink, SimCluster
from kubetide.sim.engine import Engine, Event
from kubetide.sim.ports import CA_SOURCE, SimClusterPort, SimWorldSource

__all__ = ["SOURCE", "ClusterAutoscalerRunner"]

SOURCE = CA_SOURCE


class ClusterAutoscalerRunner:
    """The driver on the engine: ``tick`` every ``--scan-interval``, ``restart`` on a scenario action."""

    def __init__(
        self,
        engine: Engine,
        cluster: SimCluster,
        cloud: SimulatedCloud,
        options: AutoscalingOptions,
        events: EventSink,
        seed: int = 0,
        groups: Collection[str] | None = None,
    ) -> None:
        """``groups``: the node groups CA manages (CA's ``--nodes``); None: all of them."""
        self.engine = engine
        self.options = options
        self.source = SimWorldSource(cluster)
        self.port = SimClusterPort(cluster, events)
        self.driver = ClusterAutoscalerDriver(
            self.source, cloud.client(SOURCE, groups), self.port, options, now=engine.now, seed=seed
        )
        self._woken: dict[float, Event] = {}  # the deletions passes scheduled, by time
        self.last_status: tuple[ClusterAutoscalerStatus, float] | None = None
        self.last_loop: tuple[LoopResult, float] | None = None  # the last loop's result and time

    @property
    def stats(self) -> LoopStats:
        return self.driver.stats

    @property
    def loops(self) -> int:
        return self.driver.loops

    def world(self) -> World:
        return self.source.world()

    def start(self, phase: float) -> None:
        self.engine.every(self.options.scan_interval, self._tick, phase=phase, priority=30, name="ca-loop")

    def _tick(self, now: float) -> None:
        result = self.driver.tick(now)
        self.last_loop = (result, now)
        if result.status is not None:
            self.last_status = (result.status, now)
        self._wake_for_deletions(result, now)

    def status_config_map(self) -> str | None:
        """The status ConfigMap as the last loop left it (CA's ``--write-status-configmap``), as YAML."""
        if self.last_status is None or not self.options.write_status_configmap:
            return None
        status, at = self.last_status
        return render_status_config_map(
            status, at, self.options.namespace, self.options.status_config_map_name
        )

    def _deletions(self, now: float) -> None:
        self._woken.pop(now, None)
        self._wake_for_deletions(self.driver.deletions(now), now)

    def _wake_for_deletions(self, result: LoopResult, now: float) -> None:
        """Upstream drains a tainted node in its own goroutine, which sleeps between its steps
        (--node-delete-delay-after-taint, eviction retries, looks for the evicted pods): each step runs
        at its moment, not at the next loop."""
        due = result.deletions_due_at
        if due is not None and due > now and due not in self._woken:
            self._woken[due] = self.engine.schedule_at(due, self._deletions, priority=30, name="ca-deletions")

    def restart(self) -> None:
        """A new CA process: in-memory state is gone (its deletion goroutines too: their wake-ups are
        cancelled); the cluster and the cloud keep theirs."""
        for wake in self._woken.values():
            wake.cancel()
        self._woken.clear()
        self.driver.restart(self.engine.now)
