"""The objects a recording follows, and each change to them as the scenario's timed action.

Every poll hands :meth:`ObjectTracker.observe` one resource's objects as its watch cache holds them.
Each object whose ``resourceVersion`` changed is brought into the scenario's shape as ``scenario
from-cluster`` brings it (:func:`~kubetide.live.export.objects.export_objects`: status and server
bookkeeping removed, kubetide's HPAs as autoscaling/v2, bare Pods only) and fitted to the simulator's
loader (a field it rejects is dropped, and a note says so). Then, against what was recorded before:

- new: ``apply`` (the whole manifest);
- only ``spec.replicas`` changed: ``scale``, unless an HPA scales the workload: then nothing, since the
  replay's own HPA decides its replicas (its recorded replicas go to the samples instead);
- anything else changed: ``apply``, without ``spec.replicas`` for a workload an HPA scales (a re-apply
  without replicas keeps the replay's);
- gone: ``delete``.

Containers' ``env`` and ``envFrom`` are never recorded: the simulator does not model them, and a value
there may be a secret typed in. A Job that finished and a bare Pod that ended are not changes to replay (the simulated controllers
finish them); they are deleted when their objects are. Only digests of what was recorded are kept, so
memory grows with the number of objects, not with the length of the recording.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.live.export.fit import Checker, ExportError, fit_to_loader
from kubetide.live.export.objects import export_objects, ref
from kubetide.live.export.snapshot import ClusterObjects

__all__ = ["RESOURCES", "ObjectTracker", "Tracked"]

Json = dict[str, Any]
Note = Callable[[str], None]

# The resources followed, by their ClusterObjects field, with the kind their manifests have in the scenario
# (kubetide's HPAs are written as autoscaling/v2 HorizontalPodAutoscalers). In processing order: the HPAs
# first, so a workload an HPA starts scaling in the same poll is known to be scaled.
RESOURCES: Mapping[str, str] = {
    "hpas": "HorizontalPodAutoscaler",
    "kubetide_hpas": "HorizontalPodAutoscaler",
    "deployments": "Deployment",
    "statefulsets": "StatefulSet",
    "daemonsets": "DaemonSet",
    "jobs": "Job",
    "pods": "Pod",
    "pdbs": "PodDisruptionBudget",
    "configmaps": "ConfigMap",
}
_TERMINAL = ("Succeeded", "Failed")
_NEVER_RECORDED = ("env", "envFrom")
ENV_NOTE = (
    "containers' env and envFrom are not recorded (the simulator does not model them, and they may "
    "hold secrets)"
)


@dataclass
class Tracked:
    """What was recorded of one object: its manifest's digest without ``spec.replicas``, its replicas,
    and, for an HPA, the workload it scales."""

    resource: str
    digest: str
    replicas: int | None = None
    scales: str | None = None


def _digest(manifest: Mapping[str, Any]) -> str:
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _without_replicas(manifest: Json) -> Json:
    spec = manifest.get("spec")
    if not isinstance(spec, dict) or "replicas" not in spec:
        return manifest
    out = dict(manifest)
    out["spec"] = {k: v for k, v in spec.items() if k != "replicas"}
    return out


def _replicas(manifest: Mapping[str, Any]) -> int | None:
    value = (manifest.get("spec") or {}).get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def scale_target(hpa: Mapping[str, Any]) -> str | None:
    """``Kind/namespace/name`` of the workload an HPA manifest scales."""
    target = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
    if not target.get("kind") or not target.get("name"):
        return None
    namespace = (hpa.get("metadata") or {}).get("namespace") or "default"
    return f"{target['kind']}/{namespace}/{target['name']}"


def _api_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def _pod_specs(manifest: Json) -> list[Json]:
    spec = manifest.get("spec")
    if not isinstance(spec, dict):
        return []
    if manifest.get("kind") == "Pod":
        return [spec]
    template = spec.get("template")
    inner = template.get("spec") if isinstance(template, dict) else None
    return [inner] if isinstance(inner, dict) else []


def strip_env(manifest: Json) -> bool:
    """Remove ``env`` and ``envFrom`` from every container of ``manifest`` (in place); whether any was."""
    stripped = False
    for spec in _pod_specs(manifest):
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or []:
                if isinstance(container, dict):
                    for field_name in _NEVER_RECORDED:
                        stripped |= container.pop(field_name, None) is not None
    return stripped


def _has_controller(obj: Mapping[str, Any]) -> bool:
    owners = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(owner, dict) and owner.get("controller") for owner in owners)


def _ended(resource: str, obj: Mapping[str, Any]) -> bool:
    if resource == "pods":
        return (obj.get("status") or {}).get("phase") in _TERMINAL
    if resource == "jobs":
        conditions = (obj.get("status") or {}).get("conditions") or []
        return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions)
    return False


@dataclass
class ObjectTracker:
    """The recorded state of every followed object, and the actions that bring the replay along."""

    namespaces: Collection[str]
    check: Checker  # the simulator's loader on a one-object document (the command wires it in)
    note: Note
    # The apiVersion of each resource as served (a List's items, as the caches keep them, carry none).
    api_versions: dict[str, str] = field(default_factory=dict)
    known: dict[str, Tracked] = field(default_factory=dict)  # by Kind/namespace/name
    _seen: dict[str, dict[str, str]] = field(default_factory=dict)  # resource -> api key -> resourceVersion

    # --- what is recorded

    def hpa_targets(self) -> set[str]:
        """The workloads an HPA scales (their replicas are the replay's HPA's to decide)."""
        return {t.scales for t in self.known.values() if t.scales}

    def remember(self, resource: str, manifest: Json) -> None:
        """Record ``manifest`` as the object's state (at the start, or read back from the actions)."""
        key = ref(manifest)
        earlier = self.known.get(key)
        replicas = _replicas(manifest)
        if replicas is None and earlier is not None:
            replicas = earlier.replicas  # an apply without replicas keeps them
        scales = scale_target(manifest) if manifest.get("kind") == "HorizontalPodAutoscaler" else None
        self.known[key] = Tracked(resource, _digest(_without_replicas(manifest)), replicas, scales)

    def forget(self, key: str) -> None:
        self.known.pop(key, None)

    def scaled(self, key: str, replicas: int) -> None:
        tracked = self.known.get(key)
        if tracked is not None:
            tracked.replicas = replicas

    # --- the objects as the scenario writes them

    def export(self, resource: str, obj: Mapping[str, Any]) -> Json | None:
        """``obj`` as a scenario manifest, fitted to the loader; None when it is not one to record
        (another namespace, a controller's pod) or nothing of it loads."""
        if "kind" not in obj:
            obj = {"apiVersion": self.api_versions.get(resource, ""), "kind": RESOURCES[resource], **obj}
        found = export_objects(ClusterObjects(**{resource: [obj]}), self.namespaces)
        for text in found.notes:
            self.note(text)
        if not found.manifests:
            return None
        manifest = found.manifests[0]
        if strip_env(manifest):
            self.note(ENV_NOTE)
        document: Json = {"spec": {"objects": [manifest]}}
        try:
            dropped = fit_to_loader(document, self.check)
        except ExportError as exc:
            self.note(f"{ref(manifest)} left out: {exc}")
            return None
        for text in dropped:
            self.note(text)
        objects = document["spec"]["objects"]
        return objects[0] if objects else None

    def initial(self, resource: str, objects: Iterable[Mapping[str, Any]]) -> list[Json]:
        """The manifests at the start (recorded as the state; ended Jobs and Pods left out)."""
        out = []
        seen = self._seen.setdefault(resource, {})
        for obj in objects:
            seen[_api_key(obj)] = _rv(obj)
            if _ended(resource, obj):
                continue
            manifest = self.export(resource, obj)
            if manifest is None or self._taken(resource, ref(manifest)):
                continue
            self.remember(resource, manifest)
            out.append(manifest)
        return out

    def _taken(self, resource: str, key: str) -> bool:
        """Whether another resource's object already stands for ``key`` (kubetide's HPA beside an
        autoscaling one of the same name: the autoscaling one is recorded, as ``from-cluster`` does)."""
        tracked = self.known.get(key)
        if tracked is not None and tracked.resource != resource:
            self.note(f"{key} ({resource}) left out: the {tracked.resource} object of that name is recorded")
            return True
        return False

    # --- changes

    def observe(self, resource: str, objects: Iterable[Mapping[str, Any]], t: float) -> list[Json]:
        """The actions that take the recorded state to ``objects`` (one resource's, all of them)."""
        seen = self._seen.setdefault(resource, {})
        present: dict[str, str] = {}
        actions: list[Json] = []
        kind = RESOURCES[resource]
        for obj in objects:
            api_key = _api_key(obj)
            rv = _rv(obj)
            present[api_key] = rv
            if seen.get(api_key) == rv:
                continue
            if _ended(resource, obj) or (resource == "pods" and _has_controller(obj)):
                continue  # a controller's pod is the replay's controller's to make
            manifest = self.export(resource, obj)
            if manifest is None or self._taken(resource, ref(manifest)):
                continue
            action = self._change(resource, manifest, t)
            if action is not None:
                actions.append(action)
        for api_key in set(seen) - set(present):
            key = f"{kind}/{api_key}"
            tracked = self.known.get(key)
            if tracked is not None and tracked.resource == resource:
                self.forget(key)
                actions.append({"at": t, "delete": key})
        # On a resumed recording the cache's first list is compared with the state read back from the
        # files: what was recorded and is no longer there was deleted while nobody recorded.
        if not seen:
            listed = {f"{kind}/{k}" for k in present}
            for key, tracked in list(self.known.items()):
                if tracked.resource == resource and key not in listed:
                    self.forget(key)
                    actions.append({"at": t, "delete": key})
        self._seen[resource] = present
        return actions

    def _change(self, resource: str, manifest: Json, t: float) -> Json | None:
        key = ref(manifest)
        tracked = self.known.get(key)
        scaled_by_hpa = key in self.hpa_targets()
        if tracked is None:
            self.remember(resource, manifest)
            return {"at": t, "apply": manifest}
        replicas = _replicas(manifest)
        if _digest(_without_replicas(manifest)) == tracked.digest:
            if replicas is None or replicas == tracked.replicas:
                return None
            tracked.replicas = replicas
            if scaled_by_hpa:
                return None  # the replay's HPA decides
            return {"at": t, "scale": {"target": key, "replicas": replicas}}
        written = _without_replicas(manifest) if scaled_by_hpa else manifest
        self.remember(resource, copy.deepcopy(written))
        if scaled_by_hpa and replicas is not None:
            self.scaled(key, replicas)
        return {"at": t, "apply": written}
