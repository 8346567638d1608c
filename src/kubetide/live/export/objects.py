"""Which API objects become scenario objects, and how each kind is brought into the loader's shape.

An ordered tuple of per-kind rules, each taking the listed objects and returning the manifests to
keep with a note for every object it leaves out or changes in meaning. The order is the order the
objects are written in: workloads first (what takes capacity), then what acts on them (HPAs, PDBs),
then CA's configuration, so a reader meets each target before whatever refers to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kubetide.live.export.clean import clean_manifest
from kubetide.live.export.snapshot import ClusterObjects, Manifest
from kubetide.model.placement import PLACEMENT_ANNOTATION

__all__ = [
    "PRIORITY_EXPANDER_CONFIGMAP",
    "SYSTEM_NAMESPACES",
    "NamespaceFilter",
    "ObjectExport",
    "export_objects",
]

SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
PRIORITY_EXPANDER_CONFIGMAP = "cluster-autoscaler-priority-expander"
KUBETIDE_HPA_VERSION = "autoscaling.kubetide.io/v1"
_TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass(frozen=True)
class NamespaceFilter:
    """The namespaces whose objects are exported: the given ones, else all but the system ones; and
    ``placement``, the simulated node standing for each node of the cluster at the start."""

    only: frozenset[str] = frozenset()
    placement: Mapping[str, str] = field(default_factory=dict)
    # Per workload, the simulated nodes its pods start on, with counts (read once, see _placed).
    started_on: Mapping[str, dict[str, int]] = field(default_factory=dict)

    def __call__(self, obj: Manifest) -> bool:
        namespace = _namespace(obj)
        return namespace in self.only if self.only else namespace not in SYSTEM_NAMESPACES


@dataclass(frozen=True)
class ObjectExport:
    manifests: list[dict[str, Any]]
    notes: list[str]


Rule = Callable[[ClusterObjects, NamespaceFilter, list[str]], Iterable[dict[str, Any]]]


def _namespace(obj: Manifest) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def ref(obj: Manifest) -> str:
    """``Kind/namespace/name``, as scenarios and notes name objects."""
    return f"{obj.get('kind')}/{_namespace(obj)}/{(obj.get('metadata') or {}).get('name')}"


def _has_controller(obj: Manifest) -> bool:
    owners = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(owner.get("controller") for owner in owners)


def _live_pods(c: ClusterObjects, wanted: NamespaceFilter) -> list[Manifest]:
    return [p for p in c.pods if wanted(p) and (p.get("status") or {}).get("phase") not in _TERMINAL_PHASES]


def _workload_of(pod: Manifest) -> str | None:
    """``Kind/namespace/name`` of the exported workload that made ``pod``: its controller, or for a
    ReplicaSet's pod the Deployment that owns that ReplicaSet (named ``<deployment>-<pod-template-hash>``)."""
    meta = pod.get("metadata") or {}
    owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
    if owner is None:
        return None
    kind, name = str(owner.get("kind")), str(owner.get("name"))
    if kind == "ReplicaSet":
        suffix = f"-{(meta.get('labels') or {}).get('pod-template-hash', '')}"
        if not name.endswith(suffix) or suffix == "-":
            return None  # a ReplicaSet of its own: not exported
        kind, name = "Deployment", name[: -len(suffix)]
    return f"{kind}/{_namespace(pod)}/{name}"


def _placed(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> dict[str, dict[str, int]]:
    """For each workload, the simulated nodes standing for the nodes its pods run on, with counts."""
    placed: dict[str, dict[str, int]] = {}
    unsimulated = 0
    for pod in sorted(_live_pods(c, wanted), key=ref):
        node = (pod.get("spec") or {}).get("nodeName")
        owner = _workload_of(pod)
        if not node or owner is None or owner.startswith("DaemonSet/"):
            continue
        if node not in wanted.placement:
            unsimulated += 1
            continue
        counts = placed.setdefault(owner, {})
        counts[wanted.placement[node]] = counts.get(wanted.placement[node], 0) + 1
    if unsimulated:
        notes.append(
            f"{unsimulated} pod(s) of workloads run on nodes that are not simulated; "
            "the simulated scheduler places them"
        )
    return placed


def _with_placement(obj: Manifest, placed: Mapping[str, dict[str, int]], pods: int) -> dict[str, Any]:
    """The workload, with ``kubetide.io/placement`` naming where its first ``pods`` pods start."""
    out = clean_manifest(obj)
    counts, left = {}, pods
    for node, count in sorted(placed.get(ref(obj), {}).items()):
        if left > 0:
            counts[node] = min(count, left)
            left -= counts[node]
    if counts:
        meta = out.setdefault("metadata", {})
        meta.setdefault("annotations", {})[PLACEMENT_ANNOTATION] = json.dumps(counts, separators=(",", ":"))
    return out


def _replicas(obj: Manifest) -> int:
    replicas = (obj.get("spec") or {}).get("replicas")
    return replicas if isinstance(replicas, int) else 1


def _workloads(items: list[Manifest], wanted: NamespaceFilter) -> Iterable[dict[str, Any]]:
    return (_with_placement(o, wanted.started_on, _replicas(o)) for o in items if wanted(o))


def _deployments(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> Iterable[dict[str, Any]]:
    return _workloads(c.deployments, wanted)


def _statefulsets(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> Iterable[dict[str, Any]]:
    return _workloads(c.statefulsets, wanted)


def _daemonsets(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> Iterable[dict[str, Any]]:
    # kube-system's DaemonSets (CNI, kube-proxy, log agents) take capacity on every node: kept always.
    return (clean_manifest(o) for o in c.daemonsets if wanted(o) or _namespace(o) == "kube-system")


def _finished(job: Manifest) -> bool:
    conditions = (job.get("status") or {}).get("conditions") or []
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions)


def _jobs(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> Iterable[dict[str, Any]]:
    jobs = [j for j in c.jobs if wanted(j)]
    finished = [ref(j) for j in jobs if _finished(j)]
    if finished:
        notes.append(f"left out {len(finished)} finished Job(s): {', '.join(finished)}")
    return (_with_placement(j, wanted.started_on, _job_pods(j)) for j in jobs if not _finished(j))


def _job_pods(job: Manifest) -> int:
    """The pods the simulated Job makes at the start: parallelism, at most completions."""
    spec = job.get("spec") or {}
    parallelism = spec.get("parallelism")
    parallelism = parallelism if isinstance(parallelism, int) else 1
    completions = spec.get("completions")
    return min(parallelism, completions) if isinstance(completions, int) else parallelism


def _pods(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> Iterable[dict[str, Any]]:
    # Pods with a controller are the workloads' own: their controllers create them in the simulation,
    # bound to the nodes their workload's kubetide.io/placement names (see _placed).
    live = _live_pods(c, wanted)
    for pod in (p for p in live if not _has_controller(p)):
        out = clean_manifest(pod)
        node = (pod.get("spec") or {}).get("nodeName")
        if node and node in wanted.placement:
            # Bound where it runs: the simulated node standing for its node at the start.
            out["spec"]["nodeName"] = wanted.placement[node]
        elif node and wanted.placement:
            notes.append(f"{ref(pod)}: its node {node} is not simulated; the simulated scheduler places it")
        yield out


def _hpas(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> Iterable[dict[str, Any]]:
    kept = [clean_manifest(h) for h in c.hpas if wanted(h)]
    taken = {ref(h) for h in kept}
    for crd in (h for h in c.kubetide_hpas if wanted(h)):
        hpa = clean_manifest(crd)
        # Same spec as autoscaling/v2 (the CRD's contract), so it is written as one; what v2 lacks
        # (syncPeriod) has one value per simulation: the HPA settings' syncPeriod.
        hpa["apiVersion"] = "autoscaling/v2"
        spec = hpa.get("spec") or {}
        if "syncPeriod" in spec:
            notes.append(
                f"{ref(crd)} ({KUBETIDE_HPA_VERSION}): spec.syncPeriod {spec.pop('syncPeriod')} dropped; "
                "the simulation has one, spec.autoscalers.hpa.syncPeriod"
            )
        if ref(hpa) in taken:
            notes.append(
                f"{ref(crd)} ({KUBETIDE_HPA_VERSION}) left out: an autoscaling HPA of the same name exists"
            )
            continue
        taken.add(ref(hpa))
        kept.append(hpa)
    return kept


def _selects_nothing(selector: Any) -> bool:
    return not selector or not (selector.get("matchLabels") or selector.get("matchExpressions"))


def _pdbs(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> Iterable[dict[str, Any]]:
    for pdb in (p for p in c.pdbs if wanted(p)):
        out = clean_manifest(pdb)
        if pdb.get("apiVersion") == "policy/v1beta1":
            # policy/v1beta1: an empty selector matches no pods; written as policy/v1 (the version the
            # simulator reads) it would match every pod of the namespace and block their evictions.
            if _selects_nothing((pdb.get("spec") or {}).get("selector")):
                notes.append(
                    f"{ref(pdb)} left out: a policy/v1beta1 PDB with an empty selector protects no pods "
                    "(in policy/v1 it would protect them all)"
                )
                continue
            out["apiVersion"] = "policy/v1"
        yield out


def _configmaps(c: ClusterObjects, wanted: NamespaceFilter, notes: list[str]) -> Iterable[dict[str, Any]]:
    # Only CA's priority expander configuration means anything to the simulation; it lives in CA's
    # namespace (usually kube-system), so it is taken from any namespace.
    for cm in c.configmaps:
        if (cm.get("metadata") or {}).get("name") == PRIORITY_EXPANDER_CONFIGMAP:
            notes.append(
                f"{ref(cm)} found: its priorities name the cloud's groups; check they match the "
                "node group names written here, and add "
                "--set spec.autoscalers.clusterAutoscaler.flags.expander=priority to use it"
            )
            yield clean_manifest(cm)


# Order: workloads (capacity) first, then the objects that refer to them, then CA's configuration.
RULES: tuple[Rule, ...] = (_deployments, _statefulsets, _daemonsets, _jobs, _pods, _hpas, _pdbs, _configmaps)


def export_objects(
    cluster: ClusterObjects, namespaces: Collection[str] = (), placement: Mapping[str, str] | None = None
) -> ObjectExport:
    """The scenario's ``spec.objects`` from ``cluster``; ``namespaces`` empty: all but the system ones;
    ``placement``: the simulated node for each node at the start (bare Pods bound to it stay bound)."""
    wanted = NamespaceFilter(frozenset(namespaces), dict(placement or {}))
    notes: list[str] = []
    if wanted.placement:
        wanted = replace(wanted, started_on=_placed(cluster, wanted, notes))
    manifests = [m for rule in RULES for m in rule(cluster, wanted, notes)]
    return ObjectExport(manifests, notes)
