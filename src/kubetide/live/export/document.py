"""The scenario document from a cluster's objects: node groups, objects, autoscalers and the notes.

Pure: :func:`build_scenario` takes the listed API objects and returns the document as plain data (the
scenario format of ``shared/spec/scenario.md``) with every note a user must read (assumed bounds,
objects left out, what the API cannot tell: traffic, group bounds, CA's flags). A YAML file without
comments cannot carry those, so the command prints them on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetide.live.export.nodegroups import GroupBounds, export_node_groups
from kubetide.live.export.objects import export_objects
from kubetide.live.export.provider import ProviderGroup
from kubetide.live.export.snapshot import ClusterObjects

__all__ = ["Export", "ExportOptions", "build_scenario"]

API_VERSION = "kubetide.io/v1alpha1"
DURATION_ANNOTATION = "kubetide.io/duration"


@dataclass(frozen=True)
class ExportOptions:
    name: str = "cluster"
    duration: str | int = "24h"  # a Go duration, or seconds
    namespaces: frozenset[str] = frozenset()  # empty: all but kube-system, kube-public, kube-node-lease
    bounds: Mapping[str, GroupBounds] = field(default_factory=dict)  # --nodes MIN:MAX:GROUP
    catalog: Collection[str] = ()  # the simulator's instance type names
    # The cloud provider's groups (kwok --cloud-config, aws --nodes): groups and bounds come from it.
    provider: Sequence[ProviderGroup] | None = None
    # The simulator's name for the index-th (from 1) node of a group at the start: pods bound to a
    # node are bound to it. None: bound pods are left to the simulated scheduler.
    initial_node_name: Callable[[str, int], str] | None = None


@dataclass(frozen=True)
class Export:
    document: dict[str, Any]
    notes: list[str]


def _bounds_note(assumed: Mapping[str, GroupBounds]) -> list[str]:
    if not assumed:
        return []
    listed = ", ".join(f"{name} {b.min_size}..{b.max_size}" for name, b in assumed.items())
    flags = " ".join(f"--nodes {b.min_size}:{b.max_size}:{name}" for name, b in assumed.items())
    return [
        f"node group bounds are not in the API (the cloud keeps them); assumed: {listed}. "
        f"Give the real ones with {flags} (edited), as Cluster Autoscaler's --nodes"
    ]


def _hints(objects: list[dict[str, Any]]) -> list[str]:
    notes = [
        "no traffic: the API does not record load. Add spec.traffic (scenario.md §5) to drive CPU, "
        "memory and custom metrics; without it pods use nothing and the HPAs see idle workloads",
        "the Cluster Autoscaler runs with its default flags: give yours under "
        "spec.autoscalers.clusterAutoscaler.flags, or try them with --set "
        "spec.autoscalers.clusterAutoscaler.flags.scale-down-unneeded-time=5m",
    ]
    endless = [
        f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}"
        for o in objects
        if o.get("kind") == "Job"
        and DURATION_ANNOTATION not in (o["metadata"].get("annotations") or {})
        and DURATION_ANNOTATION
        not in (((o.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("annotations", {})
    ]
    if endless:
        notes.append(
            f"Job(s) without a {DURATION_ANNOTATION} annotation (how long each pod runs): "
            f"{', '.join(endless)}; add it to simulate their completion"
        )
    return notes


def build_scenario(cluster: ClusterObjects, options: ExportOptions) -> Export:
    """The scenario for ``cluster``: what the API tells, with notes for what it cannot."""
    groups = export_node_groups(cluster.nodes, options.catalog, options.bounds, options.provider)
    name_of = options.initial_node_name
    placement = (
        {node: name_of(group, index) for node, (group, index) in groups.initial_nodes.items()}
        if name_of is not None
        else {}
    )
    objects = export_objects(cluster, options.namespaces, placement)
    autoscalers: dict[str, Any] = {}
    if any(o.get("kind") == "HorizontalPodAutoscaler" for o in objects.manifests):
        autoscalers["hpa"] = {"enabled": True}
    autoscalers["clusterAutoscaler"] = {"enabled": True}
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "Scenario",
        "metadata": {"name": options.name},
        "spec": {
            "duration": options.duration,
            "nodeGroups": groups.groups,
            "objects": objects.manifests,
            "autoscalers": autoscalers,
        },
    }
    bounds_notes = _bounds_note(groups.assumed_bounds) if options.provider is None else []
    notes = [*groups.notes, *bounds_notes, *objects.notes, *_hints(objects.manifests)]
    return Export(document, notes)
