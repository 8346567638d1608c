"""Checks across sections, run once the scenario's structure is valid: an ordered tuple of small rules.

Each rule takes the :class:`Scenario` and yields :class:`FieldError` s with full paths. The order is the
order problems are listed in: the cloud first (catalog, groups), then objects, traffic, actions and
autoscalers, as a reader goes down the file.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

from kubetide.model.durations import format_duration
from kubetide.model.errors import FieldError
from kubetide.model.numbers import is_ascii_digits
from kubetide.model.resources import CPU, MEMORY
from kubetide.model.workloads import SCALABLE_KINDS
from kubetide.sim.cloud.nodes import GROUP_LABEL
from kubetide.sim.replay.recording import RecordingError, read_recording
from kubetide.sim.scenario.bounds import duration_bound, size_bounds
from kubetide.sim.scenario.catalog import BUILTIN_CATALOG
from kubetide.sim.scenario.csvdata import CsvError, load_csv
from kubetide.sim.scenario.model import Scenario
from kubetide.sim.scenario.objects import object_key
from kubetide.sim.scenario.paths import join
from kubetide.sim.scenario.resolved import resolve_node_group
from kubetide.sim.scenario.series_spec import CsvSeries, RampSeries, SeriesSpec, StepSeries

__all__ = ["CHECKS", "READS", "Check", "run_checks", "unimplemented_autoscalers"]

Check = Callable[[Scenario], Iterator[FieldError]]

TRAFFIC_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Pod")


def _new_instance_types(s: Scenario) -> Iterator[FieldError]:
    for name, spec in s.spec.instanceTypes.items():
        if name not in BUILTIN_CATALOG:
            for field in ("cpu", "memory"):
                if getattr(spec, field) is None:
                    yield FieldError(
                        join(join("spec.instanceTypes", name), field), "is required for a new instance type"
                    )


def _group_names_unique(s: Scenario) -> Iterator[FieldError]:
    seen: dict[str, int] = {}
    for i, group in enumerate(s.spec.nodeGroups):
        if group.name in seen:
            yield FieldError(
                f"spec.nodeGroups[{i}].name",
                f"duplicate name {group.name!r} (also spec.nodeGroups[{seen[group.name]}])",
            )
        seen.setdefault(group.name, i)


def _group_machines(s: Scenario) -> Iterator[FieldError]:
    catalog = s.catalog
    for i, group in enumerate(s.spec.nodeGroups):
        path = f"spec.nodeGroups[{i}]"
        if group.instanceType is not None and group.instanceType not in catalog:
            yield FieldError(
                f"{path}.instanceType",
                f"unknown instance type {group.instanceType!r} (known: {', '.join(sorted(catalog))}; "
                "or add it under spec.instanceTypes)",
            )
            continue
        resolved = resolve_node_group(group, catalog)
        for resource in (CPU, MEMORY):
            if resolved.capacity[resource] <= 0:
                yield FieldError(
                    f"{path}.capacity.{resource}", "is required (and > 0) when no instanceType gives it"
                )
        for resource, amount in resolved.allocatable.items():
            if amount > resolved.capacity[resource]:
                yield FieldError(join(f"{path}.allocatable", resource), "must be <= the node's capacity")


def _objects_unique(s: Scenario) -> Iterator[FieldError]:
    seen: dict[str, int] = {}
    for i, manifest in enumerate(s.spec.objects):
        key = object_key(manifest)
        if key in seen:
            yield FieldError(s.object_path(i), f"duplicate object {key} (also {s.object_path(seen[key])})")
        seen.setdefault(key, i)


def _within(s: Scenario, path: str, t: float | None) -> Iterator[FieldError]:
    if t is not None and t > s.spec.duration:
        yield FieldError(
            path,
            f"must be within the simulation (0..{format_duration(s.spec.duration)}), got {format_duration(t)}",
        )


def _series_times(s: Scenario, path: str, series: SeriesSpec) -> Iterator[FieldError]:
    if isinstance(series, StepSeries):
        for j, step in enumerate(series.steps):
            yield from _within(s, f"{path}.steps[{j}].at", step.at)
    elif isinstance(series, RampSeries):
        yield from _within(s, f"{path}.start", series.start)
        yield from _within(s, f"{path}.end", series.end)
    elif isinstance(series, CsvSeries):
        try:
            load_csv(s.base_dir / series.path, series.column, series.timeColumn)
        except CsvError as exc:
            yield FieldError(f"{path}.{exc.field}", str(exc))


def _times(s: Scenario) -> Iterator[FieldError]:
    for i, group in enumerate(s.spec.nodeGroups):
        for j, fault in enumerate(group.faults):
            yield from _within(s, f"spec.nodeGroups[{i}].faults[{j}].at", fault.at)
            yield from _within(s, f"spec.nodeGroups[{i}].faults[{j}].until", fault.until)
    for i, traffic in enumerate(s.spec.traffic):
        if traffic.rps is not None:
            yield from _series_times(s, f"spec.traffic[{i}].rps", traffic.rps)
        for name, series in (
            (("cpu", traffic.perPod.cpu), ("memory", traffic.perPod.memory)) if traffic.perPod else ()
        ):
            if series is not None:
                yield from _series_times(s, f"spec.traffic[{i}].perPod.{name}", series)
        for j, feed in enumerate(traffic.metrics):
            if feed.series is not None:
                yield from _series_times(s, f"spec.traffic[{i}].metrics[{j}].series", feed.series)
    for i, action in enumerate(s.spec.actions):
        yield from _within(s, f"spec.actions[{i}].at", action.at)


def _known_objects(s: Scenario) -> set[str]:
    """Objects at t=0 plus those applied by actions (at any time)."""
    keys = set(s.objects_by_key())
    for action in s.spec.actions:
        if action.apply is not None:
            keys.add(object_key(action.apply))
    return keys


def _traffic_targets(s: Scenario) -> Iterator[FieldError]:
    known = _known_objects(s)
    seen: dict[str, int] = {}
    for i, traffic in enumerate(s.spec.traffic):
        kind = traffic.target.split("/")[0]
        if kind not in TRAFFIC_KINDS:
            yield FieldError(
                f"spec.traffic[{i}].target",
                f"must be a {', '.join(TRAFFIC_KINDS)} (pods serve traffic), got a {kind}",
            )
        elif traffic.target not in known:
            yield FieldError(
                f"spec.traffic[{i}].target",
                f"no object {traffic.target} in spec.objects (or applied by an action)",
            )
        elif traffic.target in seen:
            yield FieldError(
                f"spec.traffic[{i}].target",
                f"{traffic.target} already has traffic (spec.traffic[{seen[traffic.target]}])",
            )
        seen.setdefault(traffic.target, i)


def _hpa_targets(s: Scenario) -> Iterator[FieldError]:
    known = _known_objects(s)
    for i, manifest in enumerate(s.spec.objects):
        if manifest.get("kind") == "HorizontalPodAutoscaler":
            ref = (manifest.get("spec") or {}).get("scaleTargetRef") or {}
            namespace = (manifest.get("metadata") or {}).get("namespace") or "default"
            key = f"{ref.get('kind')}/{namespace}/{ref.get('name')}"
            if key not in known:
                yield FieldError(
                    f"{s.object_path(i)}.spec.scaleTargetRef",
                    f"no object {key} in spec.objects (or applied by an action)",
                )


def _existing_before_each_action(s: Scenario) -> list[set[str]]:
    """For each action, the objects that exist just before it runs: the t=0 objects, then the
    earlier actions' applies and deletes, in the order the simulator runs them (by time, then as
    listed). A deleted object is gone until applied again."""
    existing = set(s.objects_by_key())
    out: list[set[str]] = [set() for _ in s.spec.actions]
    for i in sorted(range(len(s.spec.actions)), key=lambda i: (s.spec.actions[i].at, i)):
        action = s.spec.actions[i]
        out[i] = set(existing)
        if action.apply is not None:
            existing.add(object_key(action.apply))
        elif action.delete is not None:
            existing.discard(action.delete)
    return out


def _action_object_refs(s: Scenario) -> Iterator[FieldError]:
    existing = _existing_before_each_action(s)
    for i, action in enumerate(s.spec.actions):
        path = f"spec.actions[{i}]"
        known = existing[i]
        if action.delete is not None and action.delete not in known:
            yield FieldError(f"{path}.delete", f"no object {action.delete} exists at that time")
        if action.scale is not None:
            kind = action.scale.target.split("/")[0]
            if kind not in SCALABLE_KINDS:
                yield FieldError(
                    f"{path}.scale.target", f"must be a {', '.join(SCALABLE_KINDS)}, got a {kind}"
                )
            elif action.scale.target not in known:
                yield FieldError(
                    f"{path}.scale.target", f"no object {action.scale.target} exists at that time"
                )


def _action_group_refs(s: Scenario) -> Iterator[FieldError]:
    groups = {g.name for g in s.spec.nodeGroups}
    for i, action in enumerate(s.spec.actions):
        on_groups = (
            ("deleteNode", action.deleteNode),
            ("attachInstance", action.attachInstance),
            ("resizeGroup", action.resizeGroup),
        )
        for field, on_group in on_groups:
            if on_group is not None and on_group.group not in groups:
                yield FieldError(
                    f"spec.actions[{i}].{field}.group",
                    f"no node group {on_group.group!r} (known: {', '.join(sorted(groups))})",
                )


def _resize_sizes(s: Scenario) -> Iterator[FieldError]:
    groups = {g.name: g for g in s.spec.nodeGroups}
    for i, action in enumerate(s.spec.actions):
        resize = action.resizeGroup
        group = groups.get(resize.group) if resize is not None else None
        if resize is not None and group is not None and not group.minSize <= resize.size <= group.maxSize:
            yield FieldError(
                f"spec.actions[{i}].resizeGroup.size",
                f"must be between the group's minSize and maxSize ({group.minSize}..{group.maxSize}), "
                f"got {resize.size}",
            )


def _action_restarts(s: Scenario) -> Iterator[FieldError]:
    running = s.enabled_autoscalers()
    for i, action in enumerate(s.spec.actions):
        if action.restart is not None and action.restart not in running:
            yield FieldError(
                f"spec.actions[{i}].restart", f"{action.restart} is not enabled in this scenario"
            )


def _escalator_groups(s: Scenario) -> Iterator[FieldError]:
    """Each Escalator group names a spec.nodeGroups entry whose Nodes carry its label: in a simulation
    every Node comes from one, so a label they lack would leave the group without nodes for ever."""
    escalator = s.spec.autoscalers.escalator
    groups = {g.name: g for g in s.spec.nodeGroups}
    for i, ng in enumerate(escalator.groups if escalator else ()):
        path = f"spec.autoscalers.escalator.nodeGroups[{i}]"
        group = groups.get(ng.cloud_provider_group_name)
        if group is None:
            yield FieldError(
                f"{path}.cloud_provider_group_name",
                f"no node group {ng.cloud_provider_group_name!r} in spec.nodeGroups (known: {', '.join(sorted(groups))})",
            )
            continue
        if group.instanceType is not None and group.instanceType not in s.catalog:
            continue  # reported on the group
        labels = {GROUP_LABEL: group.name, **resolve_node_group(group, s.catalog).labels}
        if labels.get(ng.label_key) != ng.label_value:
            yield FieldError(
                f"{path}.label_value",
                f"the Nodes of spec.nodeGroups[{list(groups).index(group.name)}] ({group.name}) do not carry "
                f"{ng.label_key}={ng.label_value}: add it to its labels, or select them by "
                f"{GROUP_LABEL}={group.name}",
            )


def _ca_nodes(s: Scenario) -> Iterator[FieldError]:
    """``--nodes`` in a scenario chooses the groups CA manages, as on a command line; each names a
    group of spec.nodeGroups and repeats its sizes (the simulated cloud's sizes are spec.nodeGroups',
    so a different MIN:MAX would be a setting silently not applied)."""
    ca = s.spec.autoscalers.clusterAutoscaler
    if ca is None or "nodes" not in ca.flags:
        return
    groups = {g.name: (i, g) for i, g in enumerate(s.spec.nodeGroups)}
    for j, spec in enumerate(ca.flag("nodes")):
        path = f"spec.autoscalers.clusterAutoscaler.flags.nodes[{j}]"
        parts = str(spec).split(":", 2)
        if len(parts) != 3 or not is_ascii_digits(parts[0]) or not is_ascii_digits(parts[1]):
            yield FieldError(path, f"must be MIN:MAX:NAME, got {spec!r}")
            continue
        found = groups.get(parts[2])
        if found is None:
            yield FieldError(path, f"no node group {parts[2]!r} in spec.nodeGroups ({', '.join(groups)})")
            continue
        i, group = found
        if (int(parts[0]), int(parts[1])) != (group.minSize, group.maxSize):
            yield FieldError(
                path,
                f"sizes must be spec.nodeGroups[{i}]'s ({group.minSize}:{group.maxSize}): the simulated "
                "cloud sizes its groups from spec.nodeGroups",
            )


def _one_autoscaler_per_group(s: Scenario) -> Iterator[FieldError]:
    """A group both autoscalers resize would be fought over (CA removes the nodes Escalator untaints,
    Escalator taints the nodes CA added): CA must leave Escalator's groups alone, as a user does by
    leaving them out of ``--nodes``. Without ``--nodes`` the simulator does that itself; a ``--nodes``
    entry naming an Escalator group is the overlap."""
    running = s.enabled_autoscalers()
    ca, escalator = s.spec.autoscalers.clusterAutoscaler, s.spec.autoscalers.escalator
    if "cluster-autoscaler" not in running or "escalator" not in running or ca is None or escalator is None:
        return
    owned = {g.cloud_provider_group_name: i for i, g in enumerate(escalator.groups)}
    for j, spec in enumerate(ca.flag("nodes")):
        name = str(spec).split(":", 2)[-1]
        if name in owned:
            yield FieldError(
                f"spec.autoscalers.clusterAutoscaler.flags.nodes[{j}]",
                f"node group {name!r} is managed by the batch autoscaler "
                f"(spec.autoscalers.escalator.nodeGroups[{owned[name]}].cloud_provider_group_name): "
                "a group can have one autoscaler; leave it out of --nodes",
            )


def _recording_files(s: Scenario) -> Iterator[FieldError]:
    recording = s.spec.recording
    if recording is None:
        return
    try:
        read_recording(s.base_dir, recording.samples, recording.events)
    except RecordingError as exc:
        yield FieldError(f"spec.recording.{exc.field}", str(exc))


# Each capacity API kind, with the CA flags of which one must be on for the loop to read it.
_CAPACITY_FLAGS = {
    "CapacityBuffer": ("capacity-buffer-controller-enabled", "capacity-buffer-pod-injection-enabled"),
    "ProvisioningRequest": ("enable-provisioning-requests",),
    "CapacityQuota": ("capacity-quotas-enabled",),
}


def _capacity_flags(s: Scenario) -> Iterator[FieldError]:
    """A CapacityBuffer, ProvisioningRequest or CapacityQuota is read by the cluster autoscaler only
    with its flag on, as in CA: one in a scenario whose autoscaler would never read it is refused
    rather than silently ignored."""
    ca = s.spec.autoscalers.clusterAutoscaler
    running = "cluster-autoscaler" in s.enabled_autoscalers() and ca is not None
    placed = [(s.object_path(i), m) for i, m in enumerate(s.spec.objects)]
    placed += [(f"spec.actions[{i}].apply", a.apply) for i, a in enumerate(s.spec.actions) if a.apply]
    for path, manifest in placed:
        flags = _CAPACITY_FLAGS.get(str(manifest.get("kind")))
        if flags is None or (running and ca is not None and any(ca.flag(f) for f in flags)):
            continue
        yield FieldError(
            f"{path}.kind",
            f"a {manifest.get('kind')} is read only by the cluster autoscaler with "
            f"{' or '.join(flags)}: true in spec.autoscalers.clusterAutoscaler.flags",
        )


_KEYS = tuple(  # what names an object: Kind/namespace/name
    f"{where}.{field}"
    for where in ("spec.objects[*]", "spec.actions[*].apply")
    for field in ("apiVersion", "kind", "metadata.name", "metadata.namespace")
)
# Each check with what it reads ("[*]": any entry), in the order problems are listed (as a reader goes
# down the file). When other problems replaced part of the file, a check that reads a replaced part is
# skipped (see partial.py): its verdict on the rest could be wrong.
READS: dict[Check, tuple[str, ...]] = {
    duration_bound: ("spec.duration",),
    _new_instance_types: ("spec.instanceTypes",),
    _group_names_unique: ("spec.nodeGroups[*].name",),
    _group_machines: ("spec.nodeGroups", "spec.instanceTypes"),
    _objects_unique: _KEYS,
    _times: ("spec.duration", "spec.nodeGroups[*].faults", "spec.traffic", "spec.actions[*].at"),
    _traffic_targets: (*_KEYS, "spec.traffic[*].target"),
    _hpa_targets: (*_KEYS, "spec.objects[*].spec.scaleTargetRef"),
    _action_object_refs: (*_KEYS, "spec.actions[*].at", "spec.actions[*].delete", "spec.actions[*].scale"),
    _action_group_refs: (
        "spec.actions[*].deleteNode",
        "spec.actions[*].attachInstance",
        "spec.actions[*].resizeGroup",
        "spec.nodeGroups[*].name",
    ),
    _resize_sizes: (
        "spec.actions[*].resizeGroup",
        "spec.nodeGroups[*].name",
        "spec.nodeGroups[*].minSize",
        "spec.nodeGroups[*].maxSize",
    ),
    _action_restarts: (*_KEYS, "spec.actions[*].restart", "spec.autoscalers"),
    _escalator_groups: ("spec.autoscalers.escalator", "spec.nodeGroups", "spec.instanceTypes"),
    _ca_nodes: (
        "spec.autoscalers.clusterAutoscaler",
        "spec.nodeGroups[*].name",
        "spec.nodeGroups[*].minSize",
        "spec.nodeGroups[*].maxSize",
    ),
    _one_autoscaler_per_group: ("spec.autoscalers",),
    _recording_files: ("spec.recording",),
    _capacity_flags: (*_KEYS, "spec.autoscalers"),
    size_bounds: (
        "spec.duration",
        "spec.metrics",
        "spec.autoscalers",
        "spec.nodeGroups",
        "spec.objects",
        "spec.actions",
    ),
}
CHECKS: tuple[Check, ...] = tuple(READS)


def run_checks(scenario: Scenario) -> list[FieldError]:
    return [problem for check in CHECKS for problem in check(scenario)]


def unimplemented_autoscalers(scenario: Scenario, implemented: Collection[str]) -> list[FieldError]:
    """Enabled autoscalers the simulator cannot run yet (``kubetide simulate`` reports these).

    Not part of :func:`run_checks`: whether an autoscaler is implemented is a property of the
    simulator build, not of the file, and ``validate`` should accept a file written for later.
    """
    sections = {"hpa": "hpa", "cluster-autoscaler": "clusterAutoscaler", "escalator": "escalator"}
    return [
        FieldError(f"spec.autoscalers.{sections[name]}", f"{name} is not implemented in the simulator yet")
        for name in scenario.enabled_autoscalers()
        if name not in implemented
    ]
