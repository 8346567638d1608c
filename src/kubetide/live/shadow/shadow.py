"""One shadow's loop: look at the cluster, decide without acting, compare, record, count, say.

:class:`ShadowRecorder` is what every shadow shares: the comparison's state (resumed from the journal's
open records), the journal, the ``kubetide_shadow_disagreements_total{component,kind}`` counter, a log
line per disagreement and, with ``--shadow-events``, an Event on the object it is about.
:class:`CAShadow` is the cluster autoscaler's: it reads the world and the provider's targets (with the
running autoscaler's Events, for the times of its actions, and CA's status ConfigMap and the nodes'
taints where no Event says), and has a
:class:`~kubetide.cluster.autoscaler.StaticAutoscaler` decide (``decide``: nothing carried out) on the
cloud as it was before the running autoscaler's unmatched scale-ups (:mod:`.counterfactual`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubetide.clock.port import Clock
from kubetide.cloud.provider import CloudProvider, CloudProviderError
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.driver import WorldSource
from kubetide.cluster.loop.plan import LoopPlan
from kubetide.cluster.scaledown.taints import to_be_deleted_time
from kubetide.kube.metrics import SHADOW_DISAGREEMENTS
from kubetide.live.cluster_autoscaler.published import PublishedPlans
from kubetide.live.guard import WriteGate
from kubetide.live.shadow.ca_plans import being_deleted, plan_result, shadow_loop
from kubetide.live.shadow.compare import (
    Closed,
    Comparison,
    Disagreement,
    Step,
    compare,
    unmatched_scale_ups,
)
from kubetide.live.shadow.counterfactual import CounterfactualCloud
from kubetide.live.shadow.events import CAEventTimes, RunningEvents, ca_event_times
from kubetide.live.shadow.journal import Journal
from kubetide.live.shadow.observe import ClusterLook, running_actions, status_scale_ups
from kubetide.model.api import ApiError
from kubetide.runners.periodic import PeriodicRunner

__all__ = ["CAShadow", "ShadowLoopFailed", "ShadowRecorder", "ShadowRunner", "ShadowTick", "kubetide_sizes"]

log = logging.getLogger("kubetide.shadow")

# Where an Event about a disagreement goes: the object's reference (``Kind/[namespace/]name``).
EventTarget = Callable[[Disagreement], str]
Say = Callable[[str, str, str, str], None]  # (type, reason, object, message)
SHADOW_EVENT_REASON = "ShadowDisagreement"


class ShadowLoopFailed(Exception):
    """The loop could not look at the cluster (the API server, the provider): nothing compared."""


@dataclass(frozen=True, slots=True)
class ShadowTick:
    at: float
    opened: tuple[Disagreement, ...] = ()
    closed: tuple[Closed, ...] = ()
    timeline: Mapping[str, Any] = field(default_factory=dict)


def kubetide_sizes(sizes: Mapping[str, int], open_: Iterable[Disagreement]) -> dict[str, int]:
    """kubetide's timeline from the running one's: each group (an HPA's replicas) with the difference
    of every disagreement still open."""
    out = dict(sizes)
    for d in open_:
        for key, delta in d.delta.items():
            out[key] = max(out.get(key, 0) + delta, 0)
    return out


class ShadowRecorder:
    """The comparison, the journal, the counter and the Events of one shadow."""

    def __init__(
        self,
        component: str,
        running_name: str,
        journal: Journal,
        window: float,
        *,
        say: Say | None = None,
        target: EventTarget | None = None,
    ) -> None:
        self.component = component
        self.running_name = running_name
        self.journal = journal
        self.state = Comparison(window, open={d.key: d for d in journal.open.values()})
        self.say = say
        self.target = target

    def step(self, step: Step, timeline: Mapping[str, Any]) -> ShadowTick:
        self.state, opened, closed = compare(self.state, step)
        for d in opened:
            message = d.sentence(self.running_name)
            if not self.journal.record(d, self.component, message):
                continue  # written before a restart
            SHADOW_DISAGREEMENTS.labels(component=self.component, kind=d.kind).inc()
            log.info("disagreement: %s", message, extra={"kind": d.kind, "object": d.subject})
            if self.say is not None and self.target is not None:
                self.say("Normal", SHADOW_EVENT_REASON, self.target(d), message)
        for c in closed:
            self.journal.close(c)
        entry = {"at": step.at, "component": self.component, **timeline}
        if step.sizes:  # kubetide's nodes per group: the running autoscaler's, with what is open
            entry["kubetide"] = kubetide_sizes(step.sizes, self.state.open.values())
        self.journal.timeline(entry)
        return ShadowTick(step.at, opened, closed, entry)


class CAShadow:
    """The cluster autoscaler's shadow. ``provider`` is the raw provider (its targets are the running
    autoscaler's); ``build`` makes the autoscaler that decides, given the cloud it must decide on (the
    counterfactual cloud behind ``gate``, a shadow's)."""

    def __init__(
        self,
        source: WorldSource,
        provider: CloudProvider,
        recorder: ShadowRecorder,
        build: Callable[[CloudProvider], StaticAutoscaler],
        gate: WriteGate,
        published: PublishedPlans | None = None,
        events: RunningEvents | None = None,
    ) -> None:
        """``published``: where each loop's plan is served (``/debug/plan``, mode ``shadow``), so
        ``kubetide explain --cluster`` explains what kubetide would have done; ``events``: the running
        autoscaler's Events, which time its actions (None: the taint and the status ConfigMap do)."""
        self.published = published
        self.events = events
        self.source = source
        self.provider = provider
        self.recorder = recorder
        self._undone: dict[str, int] = {}
        self.autoscaler = build(CounterfactualCloud(provider, lambda: self._undone, gate))
        self.last_look: ClusterLook | None = None
        self.last_plan: LoopPlan | None = None

    def tick(self, now: float) -> ShadowTick:
        try:
            world = self.source.world()
        except ApiError as exc:
            raise ShadowLoopFailed(f"failed to read the cluster: {exc}") from exc
        try:
            self.provider.refresh()
            groups = self.provider.node_groups()
            targets = {g.id(): g.target_size() for g in groups}
            nodes: dict[str, str] = {}
            removing: dict[str, str] = {}
            for node in world.nodes:
                of = self.provider.node_group_for_node(node)
                if of is not None:
                    (removing if being_deleted(node) else nodes)[node.name] = of.id()
        except CloudProviderError as exc:
            raise ShadowLoopFailed(f"failed to read the cloud provider: {exc}") from exc
        options = self.autoscaler.options
        status = world.config_maps.get(f"{options.namespace}/{options.status_config_map_name}", {})
        said = ca_event_times(self.events.new()) if self.events is not None else CAEventTimes()
        # The Events' times first; the taint's value and the status ConfigMap's when none says.
        since = {
            n.name: t for n in world.nodes if n.name in removing and (t := to_be_deleted_time(n)) is not None
        }
        since.update(said.removals)
        scale_ups = {**status_scale_ups(status.get("status")), **said.scale_ups}
        pods = {g: tuple(p) for g, p in said.triggered_by.items()}
        look = ClusterLook(now, targets, nodes, removing, since, scale_ups, pods)
        running = running_actions(self.last_look, look)
        self._undone = unmatched_scale_ups(self.recorder.state, running)
        plan = self.autoscaler.decide(world, now)
        if self.published is not None:
            self.published.observe(plan_result(plan), world, now)
        loop = shadow_loop(plan, world.nodes, self.autoscaler.options.scale_down_unneeded_time)
        counts: dict[str, int] = {}
        for gid in nodes.values():
            counts[gid] = counts.get(gid, 0) + 1
        timeline = {
            "targets": targets,
            "nodes": {g: counts.get(g, 0) for g in targets},
            "intents": [f"{a.kind} {a.subject}" for a in loop.intents],
        }
        tick = self.recorder.step(Step(loop, running, targets), timeline)
        self.last_look, self.last_plan = look, plan
        return tick


class Ticking(Protocol):
    def tick(self, now: float) -> ShadowTick: ...


class ShadowRunner(PeriodicRunner[ShadowTick]):
    """A shadow's loop every ``period`` on ``clock``."""

    name = "shadow"
    priority = 30

    def __init__(self, shadow: Ticking, clock: Clock, period: float) -> None:
        super().__init__(clock, period)
        self.shadow = shadow
        self.last: ShadowTick | None = None

    def _loop(self, now: float) -> ShadowTick:
        self.last = self.shadow.tick(now)
        return self.last
