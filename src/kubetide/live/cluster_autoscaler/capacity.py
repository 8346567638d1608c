"""The capacity APIs in live mode: CapacityBuffers, ProvisioningRequests, CapacityQuotas and the
PodTemplates they name, read from watch caches into the loop's
:class:`~kubetide.cluster.capacity.objects.CapacityObjects`, and the loop's writes made on the API server.

Caches are started only for what the flags turn on (``--capacity-buffer-controller-enabled`` or
``--capacity-buffer-pod-injection-enabled``: buffers, PodTemplates and the workloads a ``scalableRef``
may name; ``--enable-provisioning-requests``: requests and PodTemplates; ``--capacity-quotas-enabled``:
quotas), so with every flag off CA's loop reads exactly what it read before. An object that does not
read (a field the CRD's rules refuse, which a 1.20 API server does not check) is a
:class:`~kubetide.cluster.capacity.objects.BrokenObject`: reported on itself by the loop, never
stopping the others.

A buffer's ``scalableRef`` is resolved as CA's scale resolver does it for the kinds with a scale
subresource (Deployment, ReplicaSet, StatefulSet, ReplicationController): ``status.replicas``, and the
most recent pod its ``spec.selector`` selects; a Job by its template and ``parallelism``. Any other kind
(a custom resource) is read through its ``scale`` subresource, found by discovery
(:mod:`~kubetide.live.cluster_autoscaler.scale_refs`): ``status.replicas`` and the newest pod its
``status.selector`` picks, once a loop (the reads join the caches' versions, so a change is seen).

Writes (:func:`write_capacity`): a status is read, replaced and PUT on the ``status`` subresource with
the read ``resourceVersion`` (a conflict reads again and retries); a managed PodTemplate is created, or
its template and owner replaced; a request past its time is deleted (gone already is done).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from kubetide.cluster.capacity.objects import BrokenObject, CapacityObjects, CapacityWrite, ScalableObject
from kubetide.cluster.options import AutoscalingOptions
from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ResourceKind
from kubetide.kube.rest import KubeStatusError, Rest, retrying
from kubetide.live.cluster_autoscaler.scale_refs import ScaleRead, ScaleRefs
from kubetide.model.api import ApiError
from kubetide.model.capacity.buffer import CapacityBuffer
from kubetide.model.capacity.conditions import parse_conditions
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.capacity.provisioning import ProvisioningRequest
from kubetide.model.capacity.quota import CapacityQuota
from kubetide.model.errors import ManifestError
from kubetide.model.fields import Node
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector, parse_selector_string

__all__ = ["CapacityCaches", "write_capacity"]

Json = dict[str, Any]
_SCALABLE_PLURALS = {
    ("apps", "Deployment"): "deployments",
    ("apps", "ReplicaSet"): "replicasets",
    ("apps", "StatefulSet"): "statefulsets",
    ("core", "ReplicationController"): "replicationcontrollers",
    ("", "ReplicationController"): "replicationcontrollers",
    ("batch", "Job"): "jobs",
}
_WITH_SCALE = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"})


def _or_broken(kind: str, read: Callable[[Json], Any]) -> Callable[[Json], Any]:
    """The view of an object, or what is wrong with it as a BrokenObject."""

    def convert(manifest: Json) -> Any:
        try:
            return read(manifest)
        except ManifestError as exc:
            meta = manifest.get("metadata") or {}
            try:
                conditions = parse_conditions(Node(manifest).get("status").get("conditions"))
            except ManifestError:
                conditions = ()
            return BrokenObject(
                kind,
                meta.get("namespace"),
                str(meta.get("name", "")),
                "; ".join(str(e) for e in exc.errors),
                str(manifest.get("apiVersion", "")),
                int(meta.get("generation") or 0),
                conditions,
            )

    return convert


class CapacityCaches:
    """The watch caches of the capacity objects the flags turn on."""

    def __init__(
        self,
        rest: Rest,
        kinds: Mapping[str, ResourceKind],
        options: AutoscalingOptions,
        pods: Informer[Pod],
        controllers: Mapping[str, Informer[Any]],
    ) -> None:
        o = options
        buffers = o.capacity_buffer_controller_enabled or o.capacity_buffer_pod_injection_enabled
        self._pods = pods
        self.buffers = (
            Informer(
                rest, kinds["capacitybuffers"], _or_broken("CapacityBuffer", CapacityBuffer.from_manifest)
            )
            if buffers
            else None
        )
        self.requests = (
            Informer(
                rest,
                kinds["provisioningrequests"],
                _or_broken("ProvisioningRequest", ProvisioningRequest.from_manifest),
            )
            if o.enable_provisioning_requests
            else None
        )
        self.quotas = (
            Informer(rest, kinds["capacityquotas"], _or_broken("CapacityQuota", CapacityQuota.from_manifest))
            if o.capacity_quotas_enabled
            else None
        )
        self.templates = (
            Informer(rest, kinds["podtemplates"], _or_broken("PodTemplate", PodTemplateView.from_manifest))
            if buffers or o.enable_provisioning_requests
            else None
        )
        # The workloads a buffer's scalableRef names: CA's informers for the drain rules where they
        # exist (ReplicaSets, StatefulSets, ReplicationControllers, Jobs), Deployments beside them.
        self.workloads: dict[str, Informer[Any]] = {}
        if buffers:
            self.workloads = dict(controllers)
            self.workloads["deployments"] = Informer(rest, kinds["deployments"], lambda m: m)
        self._scale_refs = ScaleRefs(rest) if buffers else None
        self._custom: dict[tuple[str, str, str, str], ScaleRead | None] = {}  # the last reads of custom kinds
        self._own = [i for i in (self.buffers, self.requests, self.quotas, self.templates) if i is not None]
        if "deployments" in self.workloads:
            self._own.append(self.workloads["deployments"])

    @property
    def informers(self) -> list[Informer[Any]]:
        """The caches this starts and stops (the shared workload caches are the world's)."""
        return self._own

    @property
    def versions(self) -> tuple[object, ...]:
        """What the objects are made of: the caches' versions and this loop's scales of custom kinds
        (read here, once a loop, since no watch tells of their change)."""
        extra = (self._pods.version, *(i.version for i in self.workloads.values())) if self.buffers else ()
        self._custom = self._read_custom()
        return (*(i.version for i in self._own), *extra, *sorted(self._custom.items()))

    def _read_custom(self) -> dict[tuple[str, str, str, str], ScaleRead | None]:
        if self.buffers is None or self._scale_refs is None:
            return {}
        out: dict[tuple[str, str, str, str], ScaleRead | None] = {}
        for buffer in self.buffers.views():
            ref = buffer.scalable_ref if isinstance(buffer, CapacityBuffer) else None
            if ref is None or (ref.api_group, ref.kind) in _SCALABLE_PLURALS:
                continue
            key = (ref.api_group, ref.kind, buffer.namespace, ref.name)
            if key not in out:
                out[key] = self._scale_refs.read(ref.api_group, ref.kind, buffer.namespace, ref.name)
        return out

    def objects(self) -> CapacityObjects:
        buffers, broken = _split(self.buffers)
        requests, broken_requests = _split(self.requests)
        quotas, broken_quotas = _split(self.quotas)
        templates, broken_templates = _split(self.templates)
        return CapacityObjects(
            buffers=tuple(buffers),
            provisioning_requests=tuple(requests),
            quotas=tuple(quotas),
            pod_templates={t.key: t for t in templates},
            scalables=self._scalables(buffers),
            broken=(*broken, *broken_requests, *broken_quotas, *broken_templates),
        )

    def _scalables(self, buffers: list[CapacityBuffer]) -> dict[tuple[str, str, str, str], ScalableObject]:
        out: dict[tuple[str, str, str, str], ScalableObject] = {}
        for buffer in buffers:
            ref = buffer.scalable_ref
            if ref is None:
                continue
            key = (ref.api_group, ref.kind, buffer.namespace, ref.name)
            if key in out:
                continue
            plural = _SCALABLE_PLURALS.get((ref.api_group, ref.kind))
            if plural is None:  # a custom kind: its scale subresource, as this loop read it
                if key not in self._custom:
                    self._custom[key] = self._read_custom().get(key)
                read = self._custom.get(key)
                if read is not None:
                    out[key] = ScalableObject(
                        read.replicas, self._newest_pod(buffer.namespace, read.selector)
                    )
                continue
            informer = self.workloads.get(plural)
            if informer is None:
                continue
            manifest = informer.get(f"{buffer.namespace}/{ref.name}")
            if manifest is not None:
                out[key] = self._scalable(ref.kind, buffer.namespace, manifest)
        return out

    def _scalable(self, kind: str, namespace: str, manifest: Json) -> ScalableObject:
        spec, status = manifest.get("spec") or {}, manifest.get("status") or {}
        template = spec.get("template")
        replicas = spec.get("parallelism", 1) if kind == "Job" else spec.get("replicas", 1)
        if kind not in _WITH_SCALE:
            return ScalableObject(None, None, template, replicas)
        scale = int(status.get("replicas") or 0)
        return ScalableObject(scale, self._recent_pod(namespace, spec.get("selector")), template, replicas)

    def _newest_pod(self, namespace: str, selector_text: str) -> Json | None:
        """``ScaleObjectPodResolver``: the newest pod a Scale's ``status.selector`` picks (an empty one,
        as ``labels.Parse("")``, picks every pod of the namespace)."""
        try:
            selector = parse_selector_string(selector_text) if selector_text else LabelSelector(())
        except ManifestError:
            return None
        return self._newest(namespace, selector)

    def _recent_pod(self, namespace: str, raw_selector: Any) -> Json | None:
        """``getMostRecentPod`` of the pods the selector picks (none: None)."""
        try:
            selector = LabelSelector.parse(Node(raw_selector)) if raw_selector else None
        except ManifestError:
            return None
        if selector is None:
            return None
        return self._newest(namespace, selector)

    def _newest(self, namespace: str, selector: LabelSelector) -> Json | None:
        chosen = [p for p in self._pods.views() if p.namespace == namespace and selector.matches(p.labels)]
        if not chosen:
            return None
        newest = max(chosen, key=lambda p: p.creation_time or 0.0)
        return self._pods.get(newest.key)


def _split(informer: Informer[Any] | None) -> tuple[list[Any], list[BrokenObject]]:
    if informer is None:
        return [], []
    good: list[Any] = []
    broken: list[BrokenObject] = []
    for view in informer.views():
        (broken if isinstance(view, BrokenObject) else good).append(view)
    return good, broken


def write_capacity(
    rest: Rest,
    kinds: Mapping[str, ResourceKind],
    write: CapacityWrite,
    *,
    attempts: int = 5,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """One of the loop's capacity writes; ApiError when it could not be made (the loop makes it again)."""
    plural = {
        "CapacityBuffer": "capacitybuffers",
        "ProvisioningRequest": "provisioningrequests",
        "CapacityQuota": "capacityquotas",
        "PodTemplate": "podtemplates",
    }[write.kind]
    kind = kinds[plural]
    path = kind.path(write.namespace, write.name)

    def status() -> None:
        try:
            current = rest.request("GET", path)
        except KubeStatusError as exc:
            if exc.status == 404:
                return  # gone since the loop read it: nothing to report on
            raise
        rest.request(
            "PUT",
            kind.path(write.namespace, write.name, "status"),
            body={**current, "status": dict(write.body)},
        )

    def pod_template() -> None:
        try:
            current = rest.request("GET", path)
        except KubeStatusError as exc:
            if exc.status != 404:
                raise
            rest.request("POST", kind.path(write.namespace), body=dict(write.body))
            return
        meta = dict(current.get("metadata") or {})
        owners = (write.body.get("metadata") or {}).get("ownerReferences")
        if owners is not None:
            meta["ownerReferences"] = owners
        rest.request("PUT", path, body={**current, "metadata": meta, "template": write.body.get("template")})

    def delete() -> None:
        try:
            rest.request("DELETE", path)
        except KubeStatusError as exc:
            if exc.status != 404:
                raise

    attempt = {"status": status, "pod-template": pod_template, "delete": delete}[write.action]
    try:
        retrying(attempt, attempts=attempts, sleep=sleep, retry_on=lambda e: e.retriable or e.status == 409)
    except KubeStatusError as exc:
        raise ApiError(f"{write.object}: {exc}") from exc
