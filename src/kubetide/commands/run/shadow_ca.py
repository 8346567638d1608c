"""``kubetide run cluster-autoscaler --shadow``: the cluster autoscaler's loop beside the one the cluster
runs, deciding without acting (:class:`~kubetide.live.shadow.shadow.CAShadow`).

Its caches are the acting autoscaler's (the same world), its ports are guarded by a shadow gate (every
write refused) over a connection that refuses every write too; it takes no Lease, writes no status or
state ConfigMap, and posts Events only with ``--shadow-events`` (one per disagreement). Each loop's plan
is served at ``/debug/plan`` (mode ``shadow``): ``kubetide explain --cluster`` explains it.
"""

from __future__ import annotations

import threading
import time

from kubetide.clock import Clock
from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.options import AutoscalingOptions
from kubetide.commands.run.common import start_caches
from kubetide.commands.run.runtime import Runtime
from kubetide.commands.run.shadow import ShadowSettings
from kubetide.kube.events import EventRecorder, uid_lookup
from kubetide.kube.rest import Rest
from kubetide.live.actuation import KubeClusterPort
from kubetide.live.cluster_autoscaler.published import PAGE_PATH, PublishedPlans
from kubetide.live.cluster_autoscaler.world import CAWorldSource
from kubetide.live.guard import GuardedClusterPort, WriteGate
from kubetide.live.shadow.compare import Disagreement
from kubetide.live.shadow.events import RunningEvents, event_lister
from kubetide.live.shadow.journal import Journal
from kubetide.live.shadow.shadow import CAShadow, ShadowRecorder, ShadowRunner

__all__ = ["ShadowCAComponent"]

COMPONENT = "cluster-autoscaler"


class ShadowCAComponent:
    """The caches, guarded ports and shadow of one ``--shadow`` CA process."""

    def __init__(
        self,
        rest: Rest,
        options: AutoscalingOptions,
        provider: CloudProvider,
        shadow: ShadowSettings,
        runtime: Runtime,
    ) -> None:
        self.published = PublishedPlans(mode="shadow")
        runtime.serve(PAGE_PATH, self.published.page)
        self.rest = rest
        self.options = options
        self.provider = provider
        self.settings = shadow
        self.gate = WriteGate(COMPONENT, lambda: False, shadow=True)
        self.world: CAWorldSource | None = None
        self.runner: ShadowRunner | None = None

    def start(self, stop: threading.Event, clock: Clock) -> ShadowRunner | None:
        versions, world = start_caches(
            COMPONENT,
            self.rest,
            stop,
            lambda v: CAWorldSource(self.rest, v, namespace=self.options.namespace),
        )
        if world is None:
            return None
        self.world = world
        events = EventRecorder(
            self.rest, COMPONENT, uid_of=uid_lookup(world.nodes, world.pods, world.config_maps)
        )
        port = GuardedClusterPort(
            KubeClusterPort(self.rest, versions, component=COMPONENT, events=events), self.gate
        )
        options = self.options

        def build(cloud: CloudProvider) -> StaticAutoscaler:
            return StaticAutoscaler(cloud, port, options, start_time=clock.now, stopwatch=time.perf_counter)

        recorder = ShadowRecorder(
            COMPONENT,
            "CA",
            Journal(self.settings.directory),
            self.settings.window,
            say=events.emit if self.settings.events else None,
            target=self._event_object,
        )
        running = RunningEvents(event_lister(self.rest, COMPONENT), "the cluster autoscaler")
        shadow = CAShadow(world, self.provider, recorder, build, self.gate, self.published, running)
        self.runner = ShadowRunner(shadow, clock, options.scan_interval)
        return self.runner

    def _event_object(self, d: Disagreement) -> str:
        """A node's disagreement on the Node; a group's on the status ConfigMap, where CA records
        group-level events."""
        if d.kind.startswith("scale-down") and d.subject != d.group:
            return f"Node/{d.subject}"
        return f"ConfigMap/{self.options.namespace}/{self.options.status_config_map_name}"

    def report(self) -> str:
        last = self.runner.last if self.runner is not None else None
        if last is None:
            return "no loop ran"
        return "\n".join(
            [f"shadow loop at {last.at}", *(f"disagreement: {d.kind} {d.subject}" for d in last.opened)]
        )

    def unsynced(self) -> list[str]:
        return self.world.unsynced() if self.world is not None else []

    def stop(self) -> None:
        if self.world is not None:
            self.world.stop()
