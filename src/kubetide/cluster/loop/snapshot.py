"""The loop's scheduling snapshot (CA spec §1 steps 11, 21-23): which nodes and pods the simulations see,
and which pending pods still need a new node.

Registered upcoming nodes (NotStarted) leave the snapshot and every upcoming node is a placeholder
from its group's template instead, so nothing is counted twice and new nodes are never scale-down
candidates. Expendable pods are left out. Pending pods that fit on a node or placeholder are bound in
the snapshot (scale-down then sees them as load) and need no scale-up; young pods wait
``--new-pod-scale-up-delay``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.loop.scaleup_decision import estimation_node, filter_out_schedulable
from kubetide.cluster.loop.timing import FunctionLabel, FunctionTimer
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.durations import parse_go_duration
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.kept import SnapshotKeeper
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["LoopSnapshot", "PendingPods", "build_snapshot"]


class PendingPods(Protocol):
    """What joins or leaves the pods to help once the filter of schedulable pods has run (the pod list
    processors after it: the capacity APIs' fake pods, ``kubetide.cluster.capacity``), and what joins the
    pending pods before it (processors before it: CA's place for buffer pods, with
    ``--capacity-buffer-ca-ordering``)."""

    def before_filter(self, view: LoopView) -> list[Pod]: ...

    def pending(self, view: LoopView, snapshot: ClusterSnapshot, to_help: Sequence[Pod]) -> list[Pod]: ...


@dataclass(frozen=True, slots=True)
class LoopSnapshot:
    """``all_nodes``: registered nodes less the upcoming ones; ``placeholders``: the upcoming nodes;
    ``to_help``: pending pods that fit nowhere and are old enough to scale up for."""

    snapshot: ClusterSnapshot
    all_nodes: tuple[NodeView, ...]
    placeholders: tuple[NodeView, ...]
    to_help: tuple[Pod, ...]


def build_snapshot(
    view: LoopView,
    registry: ClusterStateRegistry,
    templates: Mapping[str, NodeTemplate],
    options: AutoscalingOptions,
    simulator: HintingSimulator,
    keeper: SnapshotKeeper | None = None,
    timer: FunctionTimer | None = None,
    processors: PendingPods | None = None,
) -> LoopSnapshot:
    """``keeper``: the last loop's snapshot, updated instead of built afresh (the same snapshot);
    ``timer``: times ``filterOutSchedulable``; ``processors``: the pod list processors after it."""
    now, cutoff = view.now, options.expendable_pods_priority_cutoff
    counts, registered_upcoming = registry.upcoming_nodes(now)
    upcoming_names = {n for names in registered_upcoming.values() for n in names}
    all_nodes = (
        [n for n in view.nodes if n.name not in upcoming_names] if upcoming_names else list(view.nodes)
    )
    if keeper is not None:  # pods below the expendable cutoff are not bound
        pods_by_node = view.pods_by_node
        snapshot = keeper.snapshot(all_nodes, [pods_by_node[n.name] for n in all_nodes], cutoff)
    else:
        pods_by_node = view.pods_by_node
        snapshot = ClusterSnapshot.from_pods_by_node(
            all_nodes, [pods_by_node[n.name] for n in all_nodes], cutoff
        )
    placeholders: list[NodeView] = []
    for gid, count in sorted(counts.items()):
        template = templates.get(gid)
        if template is None or count <= 0:
            continue
        # One placeholder view per group, added as named copies in one step: each copy's view is
        # estimation_node(template, its name) (the snapshot renames and relabels a copy).
        names = [f"{template.node.name}-upcoming-{i}" for i in range(count)]
        first = snapshot.add_template_nodes(estimation_node(template, names[0]), names)
        placeholders.extend(map(snapshot.node, range(first, first + count)))
    # Pods the scheduler found no room for; and, with --bypassed-scheduler-names, pods of those
    # schedulers not yet scheduled, which CA does not wait for a verdict on (its own simulation decides).
    bypassed = set(options.bypassed_scheduler_names)
    world = view.world
    pending = [
        p
        for p in (world.pods if world.unbound_pods is None else world.unbound_pods)
        if not p.node_name
        and (p.unschedulable_message is not None or p.scheduler_name in bypassed)
        and p.deletion_time is None
        and p.phase not in ("Succeeded", "Failed")
        and not (p.priority < cutoff)
    ]
    if processors is not None:  # CA's expendable filter runs after its pod list processors too
        pending.extend(p for p in processors.before_filter(view) if not (p.priority < cutoff))
    timer = timer or FunctionTimer()
    started = timer.start()
    to_help = filter_out_schedulable(simulator, snapshot, pending)
    timer.observe(FunctionLabel.FILTER_OUT_SCHEDULABLE, started)
    if processors is not None:
        to_help = processors.pending(view, snapshot, to_help)
    delay = options.new_pod_scale_up_delay
    to_help = [p for p in to_help if p.creation_time is None or now - p.creation_time > _delay(p, delay)]
    return LoopSnapshot(snapshot, tuple(all_nodes), tuple(placeholders), tuple(to_help))


POD_SCALE_UP_DELAY_ANNOTATION = "cluster-autoscaler.kubernetes.io/pod-scale-up-delay"


def _delay(pod: Pod, default: float) -> float:
    """``filterOutYoungPods``: a pod's ``pod-scale-up-delay`` annotation, when it parses and is not
    below ``--new-pod-scale-up-delay`` (upstream logs the other cases and keeps the flag's delay)."""
    text = pod.annotations.get(POD_SCALE_UP_DELAY_ANNOTATION) if pod.annotations else None
    if text is None:
        return default
    try:
        value = parse_go_duration(text)
    except ValueError:
        return default
    return value if value >= default else default
