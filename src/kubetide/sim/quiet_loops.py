"""Which of the simulated Cluster Autoscaler's loops to skip: those that provably change nothing.

A steady day is mostly loops on a world nothing touched since the last one (in the 1,000-node day,
~94 % of them): :class:`QuietLoopSkipper` stands between the runner and the
:class:`~kubetide.cluster.driver.ClusterAutoscalerDriver` and answers such a loop from the last one
instead of running it, when all of this holds (else the loop runs):

* nothing the loop reads changed since the last loop run: no pod added, changed or removed (the
  cluster's change log), no node added, removed, made (not) ready or tainted, the same workloads'
  replicas, PDBs and ConfigMaps, the same instances and target sizes in the cloud (each group's
  instance list is the very same object while none came, went or changed state);
* no pod is pending or terminating, no node carries the ``ToBeDeleted`` taint, and no node group has
  scenario faults (whose windows act on the cloud's answers with time);
* the last two loops run both saw that same world, were quiet and left the autoscaler's moving memory
  the same (:func:`~kubetide.cluster.loop.quiet.quiet_memory`: a fixed point of the loop);
* ``now`` is before :func:`~kubetide.cluster.loop.quiet.quiet_deadline` (the first time-based rule that
  could answer otherwise).

A skipped loop counts as a loop, emits nothing, and its result is the last one's with the status
probed at ``now`` (the status ConfigMap's times are those of the last loop, as a loop run would write
them). A deletions pass or a restart runs as ever and makes the next loop run.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import replace

from kubetide.cluster.driver import ClusterAutoscalerDriver
from kubetide.cluster.loop.quiet import quiet_deadline, quiet_memory
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.cluster.status import ClusterAutoscalerStatus, ClusterWideStatus, Condition, NodeGroupStatus
from kubetide.model.node import NodeView
from kubetide.sim.cloud.simulated import SimulatedCloud
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.pods import REMOVED

__all__ = ["QuietLoopSkipper"]


class QuietLoopSkipper:
    """The runner's loop driver: ``driver``'s loops, but those provably quiet answered without running.
    ``enabled=False``: every loop runs (``kubetide explain`` reads the very last loop's plan)."""

    def __init__(
        self, driver: ClusterAutoscalerDriver, cluster: SimCluster, cloud: SimulatedCloud, *, enabled: bool
    ) -> None:
        self.driver = driver
        self.cluster = cluster
        self.cloud = cloud
        self.enabled = enabled
        self.skipped = 0
        self._log = cluster.watch_pods()
        self._terminating: set[str] = set()
        self._epoch = 0  # moves on whenever something a loop reads may have changed
        self._seen: tuple[object, ...] | None = None
        self._runs: list[tuple[int, Hashable]] = []  # the last two loops run: (epoch, quiet memory)
        self._deadline = -math.inf

    # --- the runner's driver

    def tick(self, now: float) -> LoopResult:
        self._observe()
        last = self.driver.last
        if self.enabled and last is not None and self._skippable(now):
            self.skipped += 1
            self.driver.loops += 1
            result = replace(
                last,
                events=[],
                status=_probed(last.status, now) if last.status is not None else None,
                function_durations=[],
            )
            self.driver.last = result
            return result
        epoch = self._epoch
        result = self.driver.tick(now)
        self._ran(result, epoch, now)
        return result

    def deletions(self, now: float, *, carry: bool = True) -> LoopResult:
        self._forget()
        return self.driver.deletions(now, carry=carry)

    def restart(self, now: float) -> None:
        self._forget()
        self.driver.restart(now)

    # --- deciding

    def _forget(self) -> None:
        self._runs.clear()
        self._epoch += 1

    def _skippable(self, now: float) -> bool:
        runs = self._runs
        return (
            len(runs) == 2
            and runs[0] == runs[1]
            and runs[1][0] == self._epoch
            and now < self._deadline
            and not self.cluster.pending_pods
        )

    def _ran(self, result: LoopResult, epoch: int, now: float) -> None:
        """After a loop run on the world of ``epoch``."""
        self._observe()  # the loop's own writes (taints, ConfigMaps) make a new world
        memory = quiet_memory(self.driver.autoscaler, result) if result.error is None else None
        world = self.driver.last_world
        if memory is None or world is None or self._terminating or self._tainted(world.nodes):
            self._runs.clear()
            return
        self._runs = [*self._runs[-1:], (epoch, memory)]
        self._deadline = quiet_deadline(self.driver.autoscaler, world.nodes, now)

    @staticmethod
    def _tainted(nodes: Sequence[NodeView]) -> bool:
        return any(t.key == TO_BE_DELETED_TAINT for n in nodes for t in n.taints)

    def _observe(self) -> None:
        """Move the epoch on when anything the loop reads may have changed since the last look."""
        log = self._log
        if log:
            for kind, pod in log:
                if kind == REMOVED or pod.terminating_until is None:
                    self._terminating.discard(pod.key)
                else:
                    self._terminating.add(pod.key)
            log.clear()
            self._epoch += 1
        seen = self._fingerprint()
        if seen != self._seen:
            self._seen = seen
            self._epoch += 1

    def _fingerprint(self) -> tuple[object, ...]:
        cluster = self.cluster
        groups = self.cloud._cloud.groups
        # Objects are held, not their ids (a freed object's id may come back): an object replaced by
        # another compares unequal unless equal field by field.
        return (
            cluster.node_views_version,
            cluster.nodes_version,
            tuple(
                (key, w, w.template, getattr(w, "replicas", 0), getattr(w, "parallelism", 0), len(w.pods))
                for key, w in cluster.workloads.items()
            ),
            tuple(cluster.pdbs.items()),
            tuple((key, tuple(data.items())) for key, data in cluster.config_maps.items()),
            bool(cluster.capacity),
            # The list itself: the very same object while no instance came, went or changed (a list
            # made anew is compared instance by instance).
            tuple((name, g.target, g.instances()) for name, g in groups.items()),
        )


def _probed(status: ClusterAutoscalerStatus, now: float) -> ClusterAutoscalerStatus:
    """``status`` as a loop at ``now`` on the same state builds it: every condition probed at ``now``,
    its transition time kept (``cluster.status.build_status``)."""

    def probed(c: Condition) -> Condition:
        return replace(c, last_probe_time=now)

    wide = status.cluster_wide
    return replace(
        status,
        cluster_wide=ClusterWideStatus(probed(wide.health), probed(wide.scale_up), probed(wide.scale_down)),
        node_groups=tuple(
            NodeGroupStatus(g.name, probed(g.health), probed(g.scale_up), probed(g.scale_down))
            for g in status.node_groups
        ),
    )
