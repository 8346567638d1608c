"""A simulated cluster served as an API server: the live adapters read and write the simulator's world
over HTTP, so the live runners can be run, on the simulation's virtual clock, against exactly the world
the simulator's runners see.

:class:`SimulatedApi` is an :class:`~kubetide.testing.object_api.ObjectApi` whose objects are the
simulation's: Nodes as the simulated world shows them (the not-ready taint while NotReady), pods (their
template's spec, their lifecycle in the status), the workloads' controllers with their replicas,
PodDisruptionBudgets with ``status.disruptionsAllowed``, ConfigMaps, HorizontalPodAutoscalers (their
manifest, and the status the live HPA last wrote), the scale subresource, and the resource metrics API
(the simulation's metrics pipeline's samples). :meth:`SimulatedApi.sync` shows the simulation's current
state (one watch event per object that changed); a write goes to the simulation as the simulator's
own ports write (a taint as :class:`~kubetide.sim.ports.SimClusterPort` writes it, an eviction through
the eviction API's PDB check, a scale through the workload), and the API shows its result at once.
:meth:`SimulatedApi.settle` is the barrier a virtual-clock test calls before each live loop: show the
simulation's state and wait until every watch cache has caught up with it.

Times are written with their fraction (a real API server keeps whole seconds), so a view read back
equals the simulator's own. The simulation's times start at 0: the epoch, for the API.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kubetide.cluster.status import format_rfc3339
from kubetide.hpa.ports import MetricsError, PodMetric
from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ServedVersions, resource_kinds
from kubetide.model.node import NodeView
from kubetide.model.selectors import parse_selector_string
from kubetide.sim.cluster.node_lifecycle import NOT_READY_TAINT
from kubetide.sim.cluster.pods import SimPod
from kubetide.sim.cluster.store import SimNode
from kubetide.sim.cluster.workloads import DaemonSetWorkload, JobWorkload, ReplicatedWorkload, Workload
from kubetide.sim.scenario.objects import object_key
from kubetide.sim.simulation import Simulation
from kubetide.testing.object_api import ObjectApi, Reply, Target, merge_patch, status_body

__all__ = ["RESOURCES", "SimulatedApi", "node_json", "pod_json"]

Json = dict[str, Any]

RESOURCES = tuple(resource_kinds(ServedVersions()).values())  # at the GA versions
_PLURALS = {r.kind: r.plural for r in RESOURCES}
_API_VERSIONS = {r.kind: r.api_version for r in RESOURCES}
_METRICS = "/apis/metrics.k8s.io/v1beta1/namespaces/"


def _time(t: float | None) -> str | None:
    return None if t is None else format_rfc3339(t)


def _dropping_none(obj: Json) -> Json:
    return {k: v for k, v in obj.items() if v is not None}


def node_json(node: SimNode) -> Json:
    """A Node as the simulated world shows it (:class:`~kubetide.sim.ports.SimWorldSource`)."""
    view = node.view
    taints = view.taints if node.ready else (*view.taints, NOT_READY_TAINT)
    meta = {
        "name": view.name,
        "uid": f"uid-node-{view.name}",
        "labels": dict(view.labels),
        "annotations": dict(view.annotations),
        "creationTimestamp": _time(view.creation_time),
    }
    return {
        "metadata": _dropping_none(meta),
        "spec": {
            "taints": [t.to_manifest() for t in taints],
            "unschedulable": view.unschedulable,
            "providerID": view.provider_id,
        },
        "status": {
            "capacity": view.capacity.to_manifest(),
            "allocatable": view.allocatable.to_manifest(),
            "conditions": [{"type": "Ready", "status": "True" if node.ready else "False"}],
            "addresses": [{"type": "InternalIP", "address": a} for a in view.addresses],
        },
    }


def pod_json(pod: SimPod, template: Mapping[str, Any]) -> Json:
    """A pod: its template's spec, stamped as the simulator stamps it, with its lifecycle as status."""
    view = pod.view()
    meta = {
        "name": view.name,
        "namespace": view.namespace,
        "uid": view.uid,
        "labels": dict(view.labels),
        "annotations": dict(view.annotations),
        "ownerReferences": [
            {"apiVersion": _API_VERSIONS.get(o.kind, "v1"), "kind": o.kind, "name": o.name, "uid": o.uid}
            | ({"controller": True} if o.controller else {})
            for o in view.owners
        ],
        "creationTimestamp": _time(view.creation_time),
        "deletionTimestamp": _time(view.deletion_time),
    }
    spec = dict(template.get("spec") or {})
    if view.node_name:
        spec["nodeName"] = view.node_name
    conditions: list[Json] = []
    if view.ready is not None:
        ready = {"type": "Ready", "status": "True" if view.ready else "False"}
        conditions.append(_dropping_none({**ready, "lastTransitionTime": _time(view.ready_transition)}))
    if view.unschedulable_message is not None:
        unschedulable = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
        conditions.append({**unschedulable, "message": view.unschedulable_message})
    status = {"phase": view.phase, "conditions": conditions, "startTime": _time(view.start_time)}
    return {"metadata": _dropping_none(meta), "spec": spec, "status": _dropping_none(status)}


class SimulatedApi(ObjectApi):
    """``simulation``'s cluster as an API server (see the module's docstring)."""

    def __init__(self, simulation: Simulation) -> None:
        super().__init__(RESOURCES)
        self.simulation = simulation
        self.cluster = simulation.cluster
        spec = simulation.scenario.spec
        applied = [*spec.objects, *(a.apply for a in spec.actions if a.apply)]
        self.manifests: dict[str, Mapping[str, Any]] = {object_key(m): m for m in applied}
        self.hpa_status: dict[str, Json] = {}  # by HorizontalPodAutoscaler/namespace/name

    @property
    def now(self) -> float:
        return self.simulation.engine.now

    # --- the simulation, shown ----------------------------------------------------------------------

    def sync(self) -> None:
        """Show the simulation's state now: one event per object that changed since the last sync."""
        cluster = self.cluster
        self.mirror("nodes", [node_json(n) for n in cluster.nodes.values()])
        self.mirror("pods", [pod_json(p, self._template(p)) for p in cluster.pods.values() if not p.deleted])
        by_plural: dict[str, list[Json]] = {
            p: [] for p in ("replicasets", "deployments", "statefulsets", "jobs")
        }
        for workload in cluster.workloads.values():
            if isinstance(workload, DaemonSetWorkload):
                raise NotImplementedError("DaemonSets are not shown by the simulated API yet")
            by_plural[_PLURALS[workload.kind]].append(self._workload_json(workload))
        for plural, objects in by_plural.items():
            self.mirror(plural, objects)
        self.mirror("poddisruptionbudgets", [self._pdb_json(key) for key in cluster.pdbs])
        self.mirror("configmaps", [_config_map_json(key, data) for key, data in cluster.config_maps.items()])
        self.mirror("horizontalpodautoscalers", [self._hpa_json(key) for key in cluster.hpas])

    def settle(self, informers: Sequence[Informer[Any]], timeout: float = 30.0) -> None:
        """Show the simulation's state and wait (up to ``timeout`` seconds) until every informer holds
        it: the barrier before a live loop on the virtual clock."""
        self.sync()
        version = self.bookmark()
        deadline = time.monotonic() + timeout
        while any(int(i.resource_version or 0) < version for i in informers):
            if time.monotonic() > deadline:
                behind = [f"{i.name} at {i.resource_version or 'nothing'}" for i in informers]
                raise TimeoutError(f"the caches did not reach resourceVersion {version}: {', '.join(behind)}")
            time.sleep(0.0005)  # the informers' threads read the watch meanwhile

    def _template(self, pod: SimPod) -> Mapping[str, Any]:
        if pod.owner is None:
            return self.manifests[f"Pod/{pod.spec.namespace}/{pod.name}"]
        manifest = self.manifests[pod.owner]
        return (manifest.get("spec") or {}).get("template") or {}

    def _workload_json(self, workload: Workload) -> Json:
        manifest = self.manifests[workload.key]
        obj: Json = {**manifest, "metadata": {**manifest["metadata"], "namespace": workload.namespace}}
        obj["metadata"]["uid"] = f"uid-{workload.key}"  # the pods' ownerReferences name it so
        spec = dict(manifest.get("spec") or {})
        if isinstance(workload, ReplicatedWorkload):
            spec["replicas"] = workload.replicas
        obj["spec"] = spec
        obj["status"] = {"replicas": len(workload.pods)}
        if isinstance(workload, JobWorkload):
            obj["status"] = {"active": len(workload.pods), "succeeded": workload.succeeded}
        return obj

    def _pdb_json(self, key: str) -> Json:
        pdb = self.cluster.pdbs[key]
        manifest = self.manifests[key]
        pods = (p for p in self.cluster.pods.values() if p.spec.namespace == pdb.namespace)
        meta = {**manifest["metadata"], "namespace": pdb.namespace, "uid": f"uid-{key}"}
        return {**manifest, "metadata": meta, "status": {"disruptionsAllowed": pdb.disruptions_allowed(pods)}}

    def _hpa_json(self, key: str) -> Json:
        manifest = self.manifests[key]
        _, namespace, _ = key.split("/", 2)
        meta = {**manifest["metadata"], "namespace": namespace, "uid": f"uid-{key}"}
        obj: Json = {**manifest, "metadata": meta}
        if key in self.hpa_status:
            obj["status"] = self.hpa_status[key]
        return obj

    # --- writes, as the simulator's ports make them ---------------------------------------------------

    def handle(self, method: str, path: str, params: Mapping[str, str], body: Any) -> Reply:
        if path.startswith(_METRICS) and method == "GET":
            return self._pod_metrics(path, params)
        target = self.target(path)
        if target is None or target.name is None:
            return super().handle(method, path, params, body)
        plural = target.resource.plural
        if plural == "nodes" and target.sub is None and method in ("PUT", "PATCH", "DELETE"):
            return self._node_write(method, target, body)
        if plural == "pods" and target.sub == "eviction" and method == "POST":
            return self._evict(target, body)
        if target.sub == "scale" and plural in ("replicasets", "deployments", "statefulsets"):
            return self._scale(method, target, body)
        if plural == "horizontalpodautoscalers" and target.sub == "status" and method == "PUT":
            key = f"HorizontalPodAutoscaler/{target.namespace}/{target.name}"
            self.hpa_status[key] = dict(body.get("status") or {})
            self.sync()
            return 200, self.get(plural, target.namespace, str(target.name))
        if plural == "configmaps" and method in ("PUT", "DELETE"):
            key = f"ConfigMap/{target.namespace}/{target.name}"
            if method == "DELETE":
                self.cluster.config_maps.pop(key, None)
            else:
                self.cluster.config_maps[key] = {str(k): str(v) for k, v in (body.get("data") or {}).items()}
            self.sync()
            return 200, self.get(plural, target.namespace, str(target.name)) or {}
        return super().handle(method, path, params, body)

    def _create(self, target: Target, body: Any) -> Reply:
        if target.resource.plural == "configmaps":
            name = str((body.get("metadata") or {}).get("name"))
            key = f"ConfigMap/{target.namespace}/{name}"
            if key in self.cluster.config_maps:
                return 409, status_body(409, "AlreadyExists", f'configmaps "{name}" already exists')
            self.cluster.config_maps[key] = {str(k): str(v) for k, v in (body.get("data") or {}).items()}
            self.sync()
            return 201, self.get("configmaps", target.namespace, name)
        return super()._create(target, body)

    def _node_write(self, method: str, target: Target, body: Any) -> Reply:
        name = str(target.name)
        node = self.cluster.nodes.get(name)
        current = self.get("nodes", None, name)
        if node is None or current is None:
            return 404, status_body(404, "NotFound", f'nodes "{name}" not found')
        if method == "DELETE":
            self.cluster.node_deleted(self.now, name)
            self.sync()
            return 200, current
        if method == "PUT":
            sent = str((body.get("metadata") or {}).get("resourceVersion", ""))
            if sent and sent != current["metadata"]["resourceVersion"]:
                return 409, status_body(409, "Conflict", f'Operation cannot be fulfilled on nodes "{name}"')
        else:
            body = merge_patch(current, body)
        wanted = NodeView.from_manifest(body)
        # As SimClusterPort writes a node: its own view never holds the lifecycle taint.
        own = tuple(t for t in wanted.taints if t != NOT_READY_TAINT)
        node.view = replace(
            node.view, taints=own, unschedulable=wanted.unschedulable, annotations=wanted.annotations
        )
        self.cluster.set_node_taints(name, own, self.now)
        self.sync()
        return 200, self.get("nodes", None, name)

    def _evict(self, target: Target, body: Any) -> Reply:
        pod = self.cluster.pods.get(f"{target.namespace}/{target.name}")
        if pod is None or pod.deleted:
            return 404, status_body(404, "NotFound", f'pods "{target.name}" not found')
        grace = (body.get("deleteOptions") or {}).get("gracePeriodSeconds")
        if not self.cluster.evict(pod, self.now, None if grace is None else float(grace)):
            message = "Cannot evict pod as it would violate the pod's disruption budget."
            return 429, status_body(429, "TooManyRequests", message)
        self.sync()
        return 201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201}

    def _scale(self, method: str, target: Target, body: Any) -> Reply:
        kind = target.resource.kind
        key = f"{kind}/{target.namespace}/{target.name}"
        workload = self.cluster.workloads.get(key)
        if not isinstance(workload, ReplicatedWorkload):
            return 404, status_body(404, "NotFound", f'{target.resource.plural} "{target.name}" not found')
        if method == "PUT":
            self.cluster.scale(key, int((body.get("spec") or {}).get("replicas", 0)), self.now)
            self.sync()
        elif method != "GET":
            return 405, status_body(405, "MethodNotAllowed", method)
        obj = self.get(target.resource.plural, target.namespace, str(target.name)) or {}
        meta = {"name": workload.name, "namespace": workload.namespace}
        return 200, {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {**meta, "resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")},
            "spec": {"replicas": workload.replicas},
            "status": {"replicas": len(workload.pods), "selector": workload.selector_text},
        }

    def _pod_metrics(self, path: str, params: Mapping[str, str]) -> Reply:
        """The resource metrics API from the simulation's pipeline (as the simulator's HPA reads it)."""
        namespace = path[len(_METRICS) :].split("/", 1)[0]
        selector = parse_selector_string(params.get("labelSelector", ""))
        samples: dict[str, dict[str, PodMetric]] = {}
        for resource in ("cpu", "memory"):
            try:
                for name, sample in self.simulation.metrics.resource_metrics(
                    namespace, selector, resource, ""
                ).items():
                    samples.setdefault(name, {})[resource] = sample
            except MetricsError:
                continue
        items = []
        for name, by_resource in samples.items():
            first = next(iter(by_resource.values()))
            items.append(
                {
                    "metadata": {"name": name, "namespace": namespace},
                    "timestamp": format_rfc3339(first.timestamp),
                    "window": f"{first.window:g}s",
                    "containers": [
                        {"name": "main", "usage": {r: f"{s.value}m" for r, s in by_resource.items()}}
                    ],
                }
            )
        return 200, {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "items": items}


def _config_map_json(key: str, data: Mapping[str, str]) -> Json:
    _, namespace, name = key.split("/", 2)
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{key}"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data)}
