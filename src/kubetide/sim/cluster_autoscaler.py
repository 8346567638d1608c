"""The Cluster Autoscaler inside the simulation: the one loop driver
(:class:`~kubetide.cluster.driver.ClusterAutoscalerDriver`) on the simulated world and cluster port
(:mod:`kubetide.sim.ports`), run by the shared :class:`~kubetide.runners.ClusterAutoscalerRunner` on the
simulation's clock; this module keeps what the run's outputs need (the last loop, its status).

The loop acts through a ``client("cluster-autoscaler")`` handle on the simulated cloud, so the cloud
attributes deletions to CA; the handle lists only the groups CA manages (its ``--nodes``, or every group
the batch autoscaler does not own), so CA leaves the others alone as a real one would.
"""

from __future__ import annotations

from collections.abc import Collection

from kubetide.clock import VirtualClock
from kubetide.cluster.driver import ClusterAutoscalerDriver
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.world import LoopStats, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.status import ClusterAutoscalerStatus, render_status_config_map
from kubetide.runners import ClusterAutoscalerRunner
from kubetide.sim.cloud.simulated import SimulatedCloud
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.store import EventSink
from kubetide.sim.ports import CA_SOURCE, SimClusterPort, SimWorldSource
from kubetide.sim.quiet_loops import QuietLoopSkipper

__all__ = ["SOURCE", "SimClusterAutoscaler"]

SOURCE = CA_SOURCE


class SimClusterAutoscaler:
    """CA in a simulation: its ports, its runner, and the last loop's result and status."""

    def __init__(
        self,
        clock: VirtualClock,
        cluster: SimCluster,
        cloud: SimulatedCloud,
        options: AutoscalingOptions,
        events: EventSink,
        seed: int = 0,
        groups: Collection[str] | None = None,
        *,
        skip_quiet_loops: bool = False,
    ) -> None:
        """``groups``: the node groups CA manages (CA's ``--nodes``); None: all of them.
        ``skip_quiet_loops``: loops that provably change nothing are answered from the last one
        (:mod:`kubetide.sim.quiet_loops`); the outputs are the same."""
        self.options = options
        self.source = SimWorldSource(cluster)
        self.port = SimClusterPort(cluster, events)
        self.driver = ClusterAutoscalerDriver(
            self.source, cloud.client(SOURCE, groups), self.port, options, now=clock.now, seed=seed
        )
        self.skipper = QuietLoopSkipper(self.driver, cluster, cloud, enabled=skip_quiet_loops)
        self.runner = ClusterAutoscalerRunner(self.skipper, clock, options.scan_interval, self)
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
        self.runner.start(phase)

    def restart(self) -> None:
        self.runner.restart()

    # The runner's reporter: the simulator keeps the last loop (``kubetide explain``) and its status.
    def loop_started(self, now: float) -> None:
        pass

    def loop_finished(self, result: LoopResult, now: float) -> None:
        self.last_loop = (result, now)
        if result.status is not None:
            self.last_status = (result.status, now)

    def deletions_finished(self, result: LoopResult, now: float) -> None:
        pass  # counted into the next loop's stats (the runner carries them)

    def status_config_map(self) -> str | None:
        """The status ConfigMap as the last loop left it (CA's ``--write-status-configmap``), as YAML."""
        if self.last_status is None or not self.options.write_status_configmap:
            return None
        status, at = self.last_status
        return render_status_config_map(
            status, at, self.options.namespace, self.options.status_config_map_name
        )
