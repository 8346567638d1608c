"""The one actuator of the Cluster Autoscaler's loop: :class:`LoopActuator` carries a
:class:`~kubetide.cluster.loop.plan.LoopPlan` out, phase after phase in the plan's order, through the
ports (the cloud's node groups, the :class:`~kubetide.model.api.ClusterPort`), and records what it did
and what failed in a :class:`~kubetide.cluster.loop.outcome.LoopOutcome`.

It tells the cluster state of each outcome as upstream's executors do (a scale-up registered, a failed
one backed off, a node deleted, the targets recalculated after changes), and keeps the state of the
drains in progress from one round to the next (upstream's drain goroutines). It decides nothing: what
an eviction answered is handed to the drain's pure decisions (:mod:`kubetide.cluster.loop.deletions`).

A dry run and the leader check are not here: the live wing wraps the ports (:mod:`kubetide.live.guard`),
so the actuator is the same in the simulator, live and a dry run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.loop.drain import DrainSettings, DrainState
from kubetide.cluster.loop.drain_actuator import execute_drain_round
from kubetide.cluster.loop.execution import Execution
from kubetide.cluster.loop.housekeeping_actuator import (
    execute_cluster_state_findings,
    execute_failed_instance_removals,
    execute_min_size_raises,
    execute_partial_delivery_removals,
    execute_size_fixes,
    execute_taint_removals,
    execute_unregistered_removals,
)
from kubetide.cluster.loop.outcome import LoopOutcome
from kubetide.cluster.loop.plan import (
    ClusterStateFindings,
    DrainRound,
    FailedInstanceRemovals,
    LoopPlan,
    MinSizeRaises,
    Notices,
    PartialDeliveryRemovals,
    Phase,
    SizeFixes,
    TaintRemovals,
    UnregisteredRemovals,
)
from kubetide.cluster.loop.scaledown_actuator import execute_scale_down
from kubetide.cluster.loop.scaledown_plan import ScaleDownPlan
from kubetide.cluster.loop.scaleup_actuator import execute_scale_up
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
from kubetide.model.api import ClusterPort

__all__ = ["LoopActuator"]


class LoopActuator:
    """``port``: the cluster's writes; ``registry``: the cluster state told of each outcome;
    ``settings``: the flags a drain reads. The cloud is reached through the plan's node groups."""

    def __init__(self, port: ClusterPort, registry: ClusterStateRegistry, settings: DrainSettings) -> None:
        self.port = port
        self.registry = registry
        self.settings = settings
        # The drains this process runs, by node (upstream's drain goroutines' state).
        self.drains: dict[str, DrainState] = {}

    def execute(self, plan: LoopPlan) -> LoopOutcome:
        """Carry out every phase of ``plan`` in order; what was done and what failed."""
        run = Execution(plan.now, plan.groups, self.port, self.registry, self.settings, self.drains)
        for phase in plan.phases:
            _execute(run, phase)
        return run.outcome

    def keep_drains(self, nodes: set[str]) -> None:
        """Forget the drains of nodes no longer being deleted (a drain abandoned and started again
        starts afresh, its evictions announced again)."""
        if self.drains:
            self.drains = {n: s for n, s in self.drains.items() if n in nodes}


def _notices(run: Execution, phase: Notices) -> None:
    for event in phase.events:
        run.emit(event)


def _drain_round(run: Execution, phase: DrainRound) -> None:
    execute_drain_round(run, phase.steps)


# Each phase's executor, by the phase's type.
_EXECUTORS: dict[type, Callable[[Execution, Any], None]] = {
    Notices: _notices,
    TaintRemovals: execute_taint_removals,
    ClusterStateFindings: execute_cluster_state_findings,
    UnregisteredRemovals: execute_unregistered_removals,
    FailedInstanceRemovals: execute_failed_instance_removals,
    PartialDeliveryRemovals: execute_partial_delivery_removals,
    SizeFixes: execute_size_fixes,
    DrainRound: _drain_round,
    ScaleUpDecision: execute_scale_up,
    ScaleDownPlan: execute_scale_down,
    MinSizeRaises: execute_min_size_raises,
}


def _execute(run: Execution, phase: Phase) -> None:
    _EXECUTORS[type(phase)](run, phase)
