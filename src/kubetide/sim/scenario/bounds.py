"""The sizes a simulation may have, so that every accepted scenario runs to its end.

A scenario of ten years, a scan interval of a microsecond or a billion replicas parses, and would then
run for days or fill the memory. These bounds refuse it at load, naming the bound; each is far beyond
what a realistic experiment needs (the benchmark's day of 1,000 nodes and 30,000 pods is well inside):

- ``spec.duration``: at most 90 days (:data:`MAX_DURATION_S`);
- every periodic loop (the metrics scrape, the HPA sync, the cluster autoscaler's scan, Escalator's
  scan) runs at most :data:`MAX_LOOP_RUNS` times over the duration;
- a node group's ``maxSize``, the node groups' initial sizes together and a fault's ``count``: at
  most :data:`MAX_NODES` nodes;
- a workload's replicas (``spec.replicas``, a Job's ``parallelism``, an HPA's ``maxReplicas``, a
  ``scale`` action's replicas) and the replicas of all workloads at t=0 together: at most
  :data:`MAX_PODS` pods.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubetide.model.durations import format_duration
from kubetide.model.errors import FieldError
from kubetide.sim.scenario.model import Scenario

__all__ = ["MAX_DURATION_S", "MAX_LOOP_RUNS", "MAX_NODES", "MAX_PODS", "duration_bound", "size_bounds"]

MAX_DURATION_S = 90 * 86400.0
MAX_LOOP_RUNS = 1_000_000
MAX_NODES = 100_000
MAX_PODS = 1_000_000


def duration_bound(s: Scenario) -> Iterator[FieldError]:
    if s.spec.duration > MAX_DURATION_S:
        yield FieldError(
            "spec.duration",
            f"too long: a simulation lasts at most {format_duration(MAX_DURATION_S)} (90 days), got "
            f"{format_duration(s.spec.duration)}",
        )


def size_bounds(s: Scenario) -> Iterator[FieldError]:
    """The loops, nodes and pods bounds (the loops only when the duration is within its own)."""
    if s.spec.duration <= MAX_DURATION_S:
        yield from _loops(s, s.spec.duration)
    yield from _nodes(s)
    yield from _pods(s)


def _loops(s: Scenario, duration: float) -> Iterator[FieldError]:
    autoscalers = s.spec.autoscalers
    running = s.enabled_autoscalers()
    loops: list[tuple[str, float]] = [("spec.metrics.resolution", s.spec.metrics.resolution)]
    if "hpa" in running:
        loops.append(("spec.autoscalers.hpa.syncPeriod", autoscalers.hpa.config().sync_period))
    if "cluster-autoscaler" in running and autoscalers.clusterAutoscaler is not None:
        scan = float(autoscalers.clusterAutoscaler.flag("scan-interval"))
        loops.append(("spec.autoscalers.clusterAutoscaler.flags.scan-interval", scan))
    if "escalator" in running and autoscalers.escalator is not None:
        loops.append(("spec.autoscalers.escalator.scanInterval", autoscalers.escalator.scanInterval))
    for path, period in loops:
        if period > 0 and duration / period > MAX_LOOP_RUNS:
            yield FieldError(
                path,
                f"too short for a {format_duration(duration)} simulation: it would run "
                f"{duration / period:,.0f} times, at most {MAX_LOOP_RUNS:,} are allowed (at least "
                f"{format_duration(duration / MAX_LOOP_RUNS)}, or a shorter spec.duration)",
            )


def _nodes(s: Scenario) -> Iterator[FieldError]:
    total = 0
    for i, group in enumerate(s.spec.nodeGroups):
        if group.maxSize > MAX_NODES:
            yield FieldError(
                f"spec.nodeGroups[{i}].maxSize",
                f"too large: a node group holds at most {MAX_NODES:,} nodes in a simulation, got {group.maxSize:,}",
            )
        total += group.initial_size
        for j, fault in enumerate(group.faults):
            count = getattr(fault, "count", 0)
            if count > MAX_NODES:
                yield FieldError(
                    f"spec.nodeGroups[{i}].faults[{j}].count",
                    f"too large: at most {MAX_NODES:,} nodes, got {count:,}",
                )
    if total > MAX_NODES:
        yield FieldError(
            "spec.nodeGroups",
            f"too large: the node groups start with {total:,} nodes together, at most {MAX_NODES:,} are allowed",
        )


def _replicas(manifest: Mapping[str, Any]) -> tuple[str, int] | None:
    """The field that says how many pods a manifest runs at once, and its value (None: not one)."""
    spec = manifest.get("spec")
    if not isinstance(spec, Mapping):
        return None
    kind = manifest.get("kind")
    key = {"Job": "parallelism", "HorizontalPodAutoscaler": "maxReplicas"}.get(str(kind), "replicas")
    value = spec.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return key, int(value)


def _pods(s: Scenario) -> Iterator[FieldError]:
    total = 0
    manifests = [(s.object_path(i), m, True) for i, m in enumerate(s.spec.objects)]
    manifests += [
        (f"spec.actions[{i}].apply", a.apply, False) for i, a in enumerate(s.spec.actions) if a.apply
    ]
    for path, manifest, at_start in manifests:
        found = _replicas(manifest)
        if found is None:
            continue
        key, value = found
        if value > MAX_PODS:
            yield FieldError(
                f"{path}.spec.{key}",
                f"too large: a simulation runs at most {MAX_PODS:,} pods, got {value:,}",
            )
        elif at_start and manifest.get("kind") != "HorizontalPodAutoscaler":
            total += value
    for i, action in enumerate(s.spec.actions):
        if action.scale is not None and action.scale.replicas > MAX_PODS:
            yield FieldError(
                f"spec.actions[{i}].scale.replicas",
                f"too large: a simulation runs at most {MAX_PODS:,} pods, got {action.scale.replicas:,}",
            )
    if total > MAX_PODS:
        yield FieldError(
            "spec.objects",
            f"too large: the workloads start with {total:,} pods together, at most {MAX_PODS:,} are allowed",
        )
