"""The snapshot file of ``kubetide explain --snapshot``: the cluster autoscaler's inputs at one moment.

::

    apiVersion: kubetide.io/v1alpha1
    kind: ClusterAutoscalerSnapshot
    time: "2026-11-24T05:00:00Z"      # or seconds since the epoch
    flags: {expander: priority}        # Cluster Autoscaler flags (optional)
    nodeGroups:
      - name: general
        minSize: 1
        maxSize: 10
        targetSize: 3                  # optional: its nodes' count
        nodeSelector: {eks.amazonaws.com/nodegroup: general}   # its nodes, by label (or nodes: [names])
        template: {kind: Node, ...}    # optional: what a new node looks like
    objects: [...]                     # `kubectl get nodes,pods,pdb,configmaps,daemonsets -A -o yaml` items

Every problem is reported with its path, all at once (:class:`~kubetide.model.errors.ManifestError`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.flags import parse_flags
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.live.cluster_autoscaler.world import controller_replicas, daemonset_view, pdb_from_manifest
from kubetide.live.providers.snapshot import SnapshotCloud, SnapshotGroup
from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.fields import parse_time
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.validation import read_validated

__all__ = ["ClusterAutoscalerSnapshot", "parse_snapshot"]

_KEYS = {"apiVersion", "kind", "time", "flags", "nodeGroups", "objects"}
_GROUP_KEYS = {"name", "minSize", "maxSize", "targetSize", "nodeSelector", "nodes", "template"}
_CONTROLLERS = ("ReplicaSet", "ReplicationController", "StatefulSet", "Job")
_KINDS = ("Node", "Pod", "PodDisruptionBudget", "ConfigMap", "DaemonSet", *_CONTROLLERS)


@dataclass(frozen=True)
class ClusterAutoscalerSnapshot:
    """The file's ``kind: ClusterAutoscalerSnapshot``, read: the loop's inputs at ``time``."""

    time: float
    options: AutoscalingOptions
    cloud: SnapshotCloud
    world: World
    notes: tuple[str, ...] = ()


def _int(doc: Mapping[str, Any], key: str, where: str, problems: list[FieldError]) -> int:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(FieldError(f"{where}.{key}", f"must be a non-negative integer, got {value!r}"))
        return 0
    return value


def _objects(raw: Any, problems: list[FieldError]) -> list[tuple[str, Mapping[str, Any]]]:
    if isinstance(raw, Mapping) and raw.get("kind") == "List":
        raw = raw.get("items")
    if not isinstance(raw, list):
        problems.append(FieldError("objects", "must be a list of Kubernetes objects (or a kind: List)"))
        return []
    out = []
    for i, obj in enumerate(raw):
        if isinstance(obj, Mapping) and obj.get("kind") == "List":
            out += [(f"objects[{i}].items[{k}]", o) for k, o in enumerate(obj.get("items") or [])]
        elif isinstance(obj, Mapping):
            out.append((f"objects[{i}]", obj))
        else:
            problems.append(FieldError(f"objects[{i}]", "must be a Kubernetes object"))
    return out


# The views of the objects the loop reads, as read_validated takes them (manifest, path).
def _pdb(obj: Any, _: str) -> Any:
    return pdb_from_manifest(dict(obj), empty_selector_matches_all=True)


def _controller(obj: Any, _: str) -> tuple[tuple[str, str, str], int]:
    return controller_replicas(str(obj.get("kind")))(dict(obj))


def _daemonset(obj: Any, _: str) -> Any:
    return daemonset_view(dict(obj))


def _nothing(obj: Any, _: str) -> None:
    return None


_MAX_EPOCH = 253_402_300_799


def parse_snapshot(doc: Any) -> ClusterAutoscalerSnapshot:
    problems: list[FieldError] = []
    notes: list[str] = []
    if not isinstance(doc, Mapping):
        raise ManifestError.at("", "must be a mapping (apiVersion, kind, time, nodeGroups, objects)")
    for key in sorted(set(doc) - _KEYS, key=str):  # YAML keys may be numbers
        problems.append(FieldError(str(key), f"unknown field (known: {', '.join(sorted(_KEYS))})"))
    if doc.get("kind") != "ClusterAutoscalerSnapshot":
        problems.append(FieldError("kind", f"must be ClusterAutoscalerSnapshot, got {doc.get('kind')!r}"))
    now = 0.0
    raw_time = doc.get("time")
    if isinstance(raw_time, int | float) and not isinstance(raw_time, bool):
        # Seconds since the epoch, up to RFC 3339's last second (9999-12-31T23:59:59Z).
        if (isinstance(raw_time, float) and not math.isfinite(raw_time)) or not 0 <= raw_time <= _MAX_EPOCH:
            problems.append(FieldError("time", f"must be seconds since the epoch in 0..{_MAX_EPOCH}"))
        else:
            now = float(raw_time)
    else:
        try:
            now = parse_time(str(raw_time)) if raw_time is not None else 0.0
            if raw_time is None:
                problems.append(FieldError("time", "is required (RFC 3339, or seconds since the epoch)"))
        except ValueError as exc:
            problems.append(FieldError("time", str(exc)))
    flags = doc.get("flags") or {}
    if not isinstance(flags, Mapping):
        problems.append(FieldError("flags", "must be a mapping of Cluster Autoscaler flags"))
        flags = {}
    values, flag_problems = parse_flags(flags)
    problems += [FieldError(f"flags.{name}", message) for name, message in flag_problems]
    options = AutoscalingOptions.from_flags(values)

    nodes: list[NodeView] = []
    pods: list[Pod] = []
    pdbs = []
    config_maps: dict[str, dict[str, str]] = {}
    daemonsets: list[Pod] = []
    controllers: dict[tuple[str, str, str], int] = {}
    skipped: dict[str, int] = {}
    have_controllers = False  # without workload objects the drain rules that need them are skipped
    for where, obj in _objects(doc.get("objects", []), problems):
        kind = str(obj.get("kind", ""))
        try:
            if kind == "Node":
                nodes.append(read_validated(obj, where, NodeView.from_manifest))
            elif kind == "Pod":
                pods.append(read_validated(obj, where, Pod.from_manifest))
            elif kind == "PodDisruptionBudget":
                pdbs.append(read_validated(obj, where, _pdb))
            elif kind == "ConfigMap":
                read_validated(obj, where, _nothing)
                meta = obj.get("metadata") or {}
                key = f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"
                config_maps[key] = {str(k): str(v) for k, v in (obj.get("data") or {}).items()}
            elif kind in _CONTROLLERS:
                key3, replicas = read_validated(obj, where, _controller)
                controllers[key3] = replicas
                have_controllers = True
            elif kind == "DaemonSet":
                key3, replicas, exemplar = read_validated(obj, where, _daemonset)
                controllers[key3] = replicas
                if exemplar is not None:
                    daemonsets.append(exemplar)
            else:
                skipped[kind] = skipped.get(kind, 0) + 1
        except ManifestError as exc:
            problems += exc.errors
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(FieldError(where, f"not a valid {kind or 'object'}: {exc}"))
    for kind, count in sorted(skipped.items()):
        notes.append(f"{count} {kind or 'untyped'} object(s) skipped: the loop reads {', '.join(_KINDS)}")

    groups: list[SnapshotGroup] = []
    raw_groups = doc.get("nodeGroups")
    if not isinstance(raw_groups, list) or not raw_groups:
        problems.append(FieldError("nodeGroups", "must list at least one node group"))
        raw_groups = []
    by_name = {n.name: n for n in nodes}
    claimed: dict[str, str] = {}
    for i, g in enumerate(raw_groups):
        where = f"nodeGroups[{i}]"
        if not isinstance(g, Mapping):
            problems.append(FieldError(where, "must be a mapping"))
            continue
        for key in sorted(set(g) - _GROUP_KEYS, key=str):
            problems.append(
                FieldError(f"{where}.{key}", f"unknown field (known: {', '.join(sorted(_GROUP_KEYS))})")
            )
        name = g.get("name")
        if not isinstance(name, str) or not name:
            problems.append(FieldError(f"{where}.name", "is required"))
            name = f"group-{i}"
        lo, hi = _int(g, "minSize", where, problems), _int(g, "maxSize", where, problems)
        if hi < lo:
            problems.append(FieldError(f"{where}.maxSize", f"must be >= minSize (got {hi} < {lo})"))
        selector, listed = g.get("nodeSelector"), g.get("nodes")
        if (selector is None) == (listed is None):
            problems.append(FieldError(where, "needs exactly one of nodeSelector (labels) and nodes (names)"))
            members: list[NodeView] = []
        elif selector is not None:
            if not isinstance(selector, Mapping):
                problems.append(FieldError(f"{where}.nodeSelector", "must map labels to values"))
                members = []
            else:
                members = [
                    n for n in nodes if all(n.labels.get(str(k)) == str(v) for k, v in selector.items())
                ]
        else:
            members = []
            for k, n in enumerate(listed if isinstance(listed, list) else []):
                if str(n) not in by_name:
                    problems.append(FieldError(f"{where}.nodes[{k}]", f"no Node {n!r} in objects"))
                else:
                    members.append(by_name[str(n)])
        for m in members:
            other = claimed.setdefault(m.name, name)
            if other != name:
                problems.append(FieldError(where, f"node {m.name} is also in node group {other}"))
        target = _int(g, "targetSize", where, problems) if "targetSize" in g else len(members)
        template = None
        if g.get("template") is not None:
            try:
                template = NodeTemplate(
                    read_validated(g["template"], f"{where}.template", NodeView.from_manifest)
                )
            except ManifestError as exc:
                problems += exc.errors
        groups.append(SnapshotGroup(name, lo, hi, target, tuple(members), template))
    if problems:
        raise ManifestError(problems)
    world = World(nodes, pods, pdbs, config_maps, controllers if have_controllers else None, daemonsets)
    return ClusterAutoscalerSnapshot(now, options, SnapshotCloud(groups), world, tuple(notes))
