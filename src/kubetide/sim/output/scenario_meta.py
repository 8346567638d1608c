"""``ReportMeta`` read off a loaded scenario: its node groups, its scalable workloads, each one's HPA
targets (from the HPA manifests, as Kubernetes reads them) and its traffic's ``capacityPerPod``.

The simulator may pass its own workload list (the ones it writes timeline columns for); by default it is
every Deployment, StatefulSet and ReplicaSet in ``spec.objects``, then any other traffic target, in the
scenario's order, which fixes the colours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubetide.model.quantity import QuantityError, parse_quantity
from kubetide.sim.output.meta import ReportMeta
from kubetide.sim.scenario.model import Scenario
from kubetide.sim.scenario.objects import object_key

__all__ = ["hpa_targets", "meta_from_scenario"]

SCALABLE_KINDS = ("Deployment", "StatefulSet", "ReplicaSet")


def meta_from_scenario(scenario: Scenario, workloads: Iterable[str] | None = None) -> ReportMeta:
    spec = scenario.spec
    if workloads is None:
        keys = [object_key(m) for m in spec.objects if m.get("kind") in SCALABLE_KINDS]
        keys += [t.target for t in spec.traffic if t.target not in keys]
        workloads = dict.fromkeys(keys)
    chosen = tuple(dict.fromkeys(workloads))
    targets: dict[str, Mapping[str, float] | None] = {key: None for key in chosen}
    for manifest in spec.objects:
        if manifest.get("kind") == "HorizontalPodAutoscaler":
            target_key, found = hpa_targets(manifest)
            if target_key in targets and found:
                targets[target_key] = found
    capacity = {t.target: t.capacityPerPod for t in spec.traffic if t.capacityPerPod is not None}
    return ReportMeta(
        scenario=scenario.name,
        seed=spec.seed,
        duration=spec.duration,
        node_groups=tuple(g.name for g in spec.nodeGroups),
        workloads=chosen,
        hpa_targets=targets,
        capacity_per_pod={k: v for k, v in capacity.items() if k in targets},
    )


def hpa_targets(manifest: Mapping[str, Any]) -> tuple[str, dict[str, float]]:
    """The scale target's key and ``{metric: target}``: ``cpu_utilization`` in percent for a CPU
    ``Utilization`` target (v2) or ``targetCPUUtilizationPercentage`` (v1); other metrics by name, as
    their average or plain value. Malformed parts are left out: the scenario checks reported them."""
    meta = manifest.get("metadata") or {}
    spec = manifest.get("spec") or {}
    ref = spec.get("scaleTargetRef") or {}
    key = f"{ref.get('kind')}/{meta.get('namespace') or 'default'}/{ref.get('name')}"
    found: dict[str, float] = {}
    if isinstance(spec.get("targetCPUUtilizationPercentage"), int | float):
        found["cpu_utilization"] = float(spec["targetCPUUtilizationPercentage"])
    for metric in spec.get("metrics") or []:
        kind = metric.get("type")
        source = (
            metric.get({"Resource": "resource", "ContainerResource": "containerResource"}.get(kind, "")) or {}
        )
        if kind in ("Resource", "ContainerResource"):
            target = source.get("target") or {}
            if source.get("name") == "cpu" and target.get("type") == "Utilization":
                found["cpu_utilization"] = float(target.get("averageUtilization", 0))
            continue
        body = metric.get({"Pods": "pods", "Object": "object", "External": "external"}.get(kind, "")) or {}
        name = (body.get("metric") or {}).get("name")
        target = body.get("target") or {}
        value = target.get("averageValue", target.get("value"))
        if name and value is not None:
            try:
                found[str(name)] = parse_quantity(value).milli / 1000
            except QuantityError:
                continue
    return key, found
