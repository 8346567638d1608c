"""Escalator's main loop, one tick at a time: upstream ``RunOnce``, shared by the simulator and live mode.

A tick refreshes the cloud, reads the world once, and for every configured group **in config order**
reads the cloud group's sizes, decides (:func:`escalator_scale_node_group`) with the group's
:class:`GroupMemory`, carries the decision out (:func:`execute_decision`) and keeps the next memory:
the decision's, or ``memory_if_increase_fails`` when the cloud refused the increase (no scale lock for
nodes that were never asked for). The memory lives in the driver only; :meth:`EscalatorDriver.restart`
forgets it, as a restarted Escalator does. What a restart must not forget is on the nodes: the removal
taint carries the Unix second it was added, so reaping resumes on time and nothing is tainted twice.

Unlike upstream, where a missing cloud group ends the process, a group that cannot run is reported
and the other groups still run. The :class:`TickResult` carries the decisions, what was executed
(or, in dry mode, what would have been), every error, and Escalator's metrics as plain values.
``now`` is an argument: no clock, no I/O but the three ports.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import CloudProvider, NodeGroup
from kubetide.escalator.config import NodeGroupOptions, escalator_dry_mode
from kubetide.escalator.decision import escalator_scale_node_group
from kubetide.escalator.executor import Execution, GroupView, execute_decision
from kubetide.escalator.health import escalator_node_unhealthy
from kubetide.escalator.membership import group_nodes, group_pods, node_info_map
from kubetide.escalator.metrics import (
    CLOUD_MAX_SIZE,
    CLOUD_MIN_SIZE,
    CLOUD_SIZE,
    CLOUD_TARGET_SIZE,
    RUN_COUNT,
    MetricValues,
    record_group_run,
)
from kubetide.escalator.reasons import EventReason, Message, Reason
from kubetide.escalator.result import GroupRun, TickResult
from kubetide.escalator.samples import Sample
from kubetide.escalator.scale import AsgSnapshot
from kubetide.escalator.state import GroupMemory
from kubetide.escalator.world import EscalatorWorldSource
from kubetide.model.api import ClusterPort
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["EscalatorDriver"]

_TERMINAL = ("Succeeded", "Failed")


def _asg(cloud: NodeGroup) -> AsgSnapshot:
    return AsgSnapshot(cloud.min_size(), cloud.max_size(), cloud.target_size())


class EscalatorDriver:
    """Upstream's ``Controller``: the configured groups, their memories, and the ports it acts through.

    ``groups`` are validated options, in config order. ``dry_run`` is ``--drymode``: with it, or a
    group's ``dry_mode``, that group decides on its in-memory taint tracker and calls nothing.
    """

    def __init__(
        self,
        groups: Sequence[NodeGroupOptions],
        world: EscalatorWorldSource,
        cluster: ClusterPort,
        cloud: CloudProvider,
        *,
        dry_run: bool = False,
    ) -> None:
        self.groups = tuple(groups)
        self.world, self.cluster, self.cloud = world, cluster, cloud
        self.dry_run = dry_run
        self._memory: dict[str, GroupMemory] = {}
        self._metrics = MetricValues()

    def memory(self, group: str) -> GroupMemory:
        return self._memory.get(group, GroupMemory())

    def restart(self) -> None:
        """Forget every group's memory (scale lock, cached node size, dry-mode trackers)."""
        self._memory.clear()

    def tick(self, now: float) -> TickResult:
        errors: list[str] = []
        try:
            self.cloud.refresh()
        except CloudProviderError as exc:  # not fatal upstream either: the groups run on what it has
            errors.append(f"cloud provider failed to refresh: {exc}")
        nodes = tuple(self.world.nodes())
        pods = tuple(p for p in self.world.pods() if p.phase not in _TERMINAL)
        by_id = {g.id(): g for g in self.cloud.node_groups()}
        errors += self._cloud_metrics(by_id)
        runs: list[GroupRun] = []
        observations: list[Sample] = []
        for opts in self.groups:
            run = self._run_group(opts, by_id.get(opts.cloud_provider_group_name), nodes, pods, now)
            runs.append(run)
            errors += [f"nodegroup {run.group}: {e}" for e in run.errors]
            observations += record_group_run(self._metrics, run, now)
            self._memory[opts.name] = run.memory
        self._metrics.add(RUN_COUNT, (), 1.0)
        return TickResult(now, tuple(runs), tuple(errors), self._metrics.samples(), tuple(observations))

    def _run_group(
        self,
        opts: NodeGroupOptions,
        cloud: NodeGroup | None,
        nodes: Sequence[NodeView],
        pods: Sequence[Pod],
        now: float,
    ) -> GroupRun:
        dry = escalator_dry_mode(self.dry_run, opts)
        try:
            if cloud is None:
                raise CloudProviderError("could not find node group")  # upstream RunOnce's text
            asg = _asg(cloud)
        except CloudProviderError as exc:
            if not dry:
                self.cluster.emit_event("Warning", EventReason.RUN_FAILED, f"NodeGroup/{opts.name}", str(exc))
            memory = self.memory(opts.name)
            return GroupRun(opts.name, None, Execution(opts.name), str(exc), memory, memory, opts)
        before = self.memory(opts.name)
        decision = escalator_scale_node_group(
            opts, nodes, pods, asg, before, now, global_dry_mode=self.dry_run
        )
        effective = opts.with_discovered_min_max(asg.min_size, asg.max_size)
        gpods = group_pods(pods, effective)
        view = self._view(effective, nodes, gpods, before, now)
        execution = execute_decision(decision, view, self.cluster, cloud)
        memory = decision.memory
        if execution.increase_failed and decision.memory_if_increase_fails is not None:
            memory = decision.memory_if_increase_fails
        if decision.error and not dry:
            self.cluster.emit_event(
                "Warning", EventReason.RUN_FAILED, f"NodeGroup/{opts.name}", decision.error
            )
        if Reason.LOCKED in decision.reasons and not dry:
            message = Message.lock_held(decision.delta)
            self.cluster.emit_event("Normal", EventReason.SCALE_LOCK_HELD, f"NodeGroup/{opts.name}", message)
        return GroupRun(
            opts.name,
            decision,
            execution,
            decision.error,
            memory,
            before,
            effective,
            len(gpods),
            view.unhealthy,
        )

    @staticmethod
    def _view(
        opts: NodeGroupOptions,
        nodes: Sequence[NodeView],
        gpods: Sequence[Pod],
        before: GroupMemory,
        now: float,
    ) -> GroupView:
        mine = group_nodes(nodes, opts)
        grace = opts.unhealthy_node_grace_s
        unhealthy = (
            frozenset(n.name for n in mine if escalator_node_unhealthy(n, grace, now))
            if opts.health_check_enabled
            else frozenset()
        )
        pods_by_node = node_info_map(gpods, mine)
        return GroupView({n.name: n for n in mine}, pods_by_node, unhealthy, before)

    def _cloud_metrics(self, by_id: dict[str, NodeGroup]) -> list[str]:
        """Upstream sets these at Refresh, for every configured cloud group; an error only skips them."""
        errors: list[str] = []
        for gid in dict.fromkeys(o.cloud_provider_group_name for o in self.groups):
            cloud = by_id.get(gid)
            if cloud is None:
                continue
            labels = (("cloud_provider", self.cloud.name()), ("id", gid), ("node_group", gid))
            try:
                asg, size = _asg(cloud), len(cloud.nodes())
            except CloudProviderError as exc:
                errors.append(f"cloud provider node group {gid}: {exc}")
                continue
            self._metrics.set(CLOUD_MIN_SIZE, labels, float(asg.min_size))
            self._metrics.set(CLOUD_MAX_SIZE, labels, float(asg.max_size))
            self._metrics.set(CLOUD_TARGET_SIZE, labels, float(asg.target_size))
            self._metrics.set(CLOUD_SIZE, labels, float(size))
        return errors
