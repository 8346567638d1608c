"""Kubernetes objects in a scenario (§4): which kinds are supported and how each is checked.

:data:`OBJECT_VALIDATORS` is the one place that maps a kind to its check. A check receives the manifest
and its path (``spec.objects[3]``), builds the typed view where one exists (so its errors carry the full
path) and raises :class:`ManifestError`. Unknown fields inside manifests are errors, as with
``kubectl apply --validate=strict`` (``kubetide.model.strict``, checked by the loader).

Every object is first checked with the API server's own rules (:mod:`kubetide.model.validation`):
names, labels, selectors, containers, resources, enums, ranges; the check below adds what the
simulator needs on top. HorizontalPodAutoscalers are read with ``kubetide.model.hpa`` (any
autoscaling/ version).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubetide.model.capacity import (
    BUFFER_API_VERSIONS,
    PROVREQ_API_VERSIONS,
    QUOTA_API_VERSIONS,
    CapacityBuffer,
    CapacityQuota,
    PodTemplateView,
    ProvisioningRequest,
)
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.errors import ManifestError
from kubetide.model.fields import Node
from kubetide.model.hpa import HPA
from kubetide.model.numbers import is_ascii_digits
from kubetide.model.placement import PLACEMENT_ANNOTATION, placement_of
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector
from kubetide.model.validation import read_validated
from kubetide.model.workloads import ScaleTarget

__all__ = [
    "API_VERSIONS",
    "DURATION_ANNOTATION",
    "OBJECT_VALIDATORS",
    "PLACEMENT_ANNOTATION",
    "STARTUP_DELAY_ANNOTATION",
    "ObjectValidator",
    "check_object",
    "object_key",
    "register_object_validator",
]

# (manifest, path) -> anything (a typed view, or None); raises ManifestError naming the field.
ObjectValidator = Callable[[Mapping[str, Any], str], object]

DURATION_ANNOTATION = "kubetide.io/duration"  # Job pods: how long each runs
STARTUP_DELAY_ANNOTATION = "kubetide.io/startup-delay"  # bound -> Running (default 5s)

API_VERSIONS: dict[str, tuple[str, ...]] = {
    "Deployment": ("apps/v1",),
    "ReplicaSet": ("apps/v1",),
    "StatefulSet": ("apps/v1",),
    "DaemonSet": ("apps/v1",),
    "HorizontalPodAutoscaler": (
        "autoscaling/v2",
        "autoscaling/v2beta2",
        "autoscaling/v2beta1",
        "autoscaling/v1",
    ),
    "PodDisruptionBudget": ("policy/v1",),
    "Job": ("batch/v1",),
    "Pod": ("v1",),
    "ConfigMap": ("v1",),
    "PodTemplate": ("v1",),
    "CapacityBuffer": BUFFER_API_VERSIONS,
    "ProvisioningRequest": PROVREQ_API_VERSIONS,
    "CapacityQuota": QUOTA_API_VERSIONS,
}


def object_key(manifest: Mapping[str, Any]) -> str:
    """``Kind/namespace/name`` of a manifest that passed :func:`check_object`."""
    meta = manifest.get("metadata") or {}
    return f"{manifest['kind']}/{meta.get('namespace') or 'default'}/{meta['name']}"


def check_object(manifest: Any, path: str) -> None:
    """Check one manifest: a supported kind and apiVersion, then every rule of the API server's
    validation (:mod:`kubetide.model.validation`) and the kind's own check (the view the simulator
    builds), all problems in one ManifestError."""
    root = Node(manifest, path)
    kind = root.get("kind").str()
    if kind not in OBJECT_VALIDATORS:
        raise root.get("kind").error(f"unsupported kind {kind!r} (supported: {', '.join(OBJECT_VALIDATORS)})")
    version = root.get("apiVersion").str()
    if version not in API_VERSIONS.get(kind, (version,)):
        raise root.get("apiVersion").error(
            f"must be {' or '.join(API_VERSIONS[kind])} for a {kind}, got {version!r}"
        )

    read_validated(manifest, path, _read)


def _read(manifest: Any, path: str) -> None:
    """The simulator's own check of a manifest (its view), after the API server's rules."""
    meta = Node(manifest, path).get("metadata")
    meta.get("name").str()
    meta.get("namespace").str("default")
    OBJECT_VALIDATORS[str(manifest["kind"])](manifest, path)


def _annotation_duration(annotations: Node, key: str) -> None:
    raw = annotations.mapping().get(key)
    if raw is not None:
        try:
            parse_duration(raw)
        except DurationError as exc:
            raise ManifestError.at(f'{annotations.path}["{key}"]', str(exc)) from None


def _has_containers(spec: Node) -> None:
    """The API server refuses a Pod (or template) without containers; the views would run it empty."""
    containers = spec.get("containers")
    if not containers.list():
        raise containers.error("is required: a pod runs at least one container")


def _pod_template(root: Node) -> None:
    """A workload's ``spec.template`` read as the Pod it stamps out."""
    template = root.get("spec").get("template")
    _has_containers(template.get("spec"))
    meta = dict(template.get("metadata").mapping())
    meta.setdefault("name", "template")
    Pod.from_manifest({"metadata": meta, "spec": template.get("spec").mapping()}, template.path)
    _annotation_duration(template.get("metadata").get("annotations"), STARTUP_DELAY_ANNOTATION)
    _annotation_duration(template.get("metadata").get("annotations"), DURATION_ANNOTATION)


def _placement(manifest: Mapping[str, Any], path: str, pods: int, what: str) -> None:
    """``kubetide.io/placement`` places at most the pods the workload makes at the start."""
    placed = len(placement_of(manifest, path))
    if placed > pods:
        raise ManifestError.at(
            f'{path}.metadata.annotations["{PLACEMENT_ANNOTATION}"]',
            f"places {placed} pods but the workload starts with {pods} ({what})",
        )


def _scale_target(manifest: Mapping[str, Any], path: str) -> None:
    target = ScaleTarget.from_manifest(manifest, path)
    _pod_template(Node(manifest, path))
    _placement(manifest, path, target.replicas, "spec.replicas")


def _no_placement(manifest: Mapping[str, Any], path: str, instead: str) -> None:
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    if PLACEMENT_ANNOTATION in annotations:
        raise ManifestError.at(
            f'{path}.metadata.annotations["{PLACEMENT_ANNOTATION}"]',
            f"places the pods of Deployments, ReplicaSets, StatefulSets and Jobs; {instead}",
        )


def _daemon_set(manifest: Mapping[str, Any], path: str) -> None:
    _no_placement(manifest, path, "a DaemonSet's pods run on every node they can")
    root = Node(manifest, path)
    LabelSelector.parse(root.get("spec").get("selector"))
    _pod_template(root)


def _job(manifest: Mapping[str, Any], path: str) -> None:
    root = Node(manifest, path)
    spec = root.get("spec")
    parallelism = spec.get("parallelism").int(1, minimum=0)
    completions = spec.get("completions").int(parallelism, minimum=0)
    _annotation_duration(root.get("metadata").get("annotations"), DURATION_ANNOTATION)
    _pod_template(root)
    _placement(manifest, path, min(parallelism, completions), "spec.parallelism, at most spec.completions")


def _pod(manifest: Mapping[str, Any], path: str) -> None:
    _no_placement(manifest, path, "a bare Pod is bound with spec.nodeName")
    _has_containers(Node(manifest, path).get("spec"))
    Pod.from_manifest(manifest, path)
    _annotation_duration(Node(manifest, path).get("metadata").get("annotations"), STARTUP_DELAY_ANNOTATION)


def _int_or_percent(node: Node) -> None:
    if isinstance(node.value, str):
        if not (node.value.endswith("%") and is_ascii_digits(node.value[:-1])):
            raise node.error(f"must be an integer or a percentage like 50%, got {node.value!r}")
    else:
        node.int(None, minimum=0)


def _pdb(manifest: Mapping[str, Any], path: str) -> None:
    spec = Node(manifest, path).get("spec")
    if spec.has("minAvailable") and spec.has("maxUnavailable"):
        raise spec.error("minAvailable and maxUnavailable cannot both be set")
    _int_or_percent(spec.get("minAvailable"))
    _int_or_percent(spec.get("maxUnavailable"))
    LabelSelector.parse(spec.get("selector"))


def _config_map(manifest: Mapping[str, Any], path: str) -> None:
    Node(manifest, path).get("data").string_map()


def _pod_template_object(manifest: Mapping[str, Any], path: str) -> None:
    """A PodTemplate (what a CapacityBuffer or a ProvisioningRequest names): its ``template`` as a pod."""
    root = Node(manifest, path)
    _has_containers(root.get("template").get("spec"))
    PodTemplateView.from_manifest(manifest, path)


def _hpa(manifest: Mapping[str, Any], path: str) -> HPA:
    return HPA.from_manifest(manifest, path)  # the API server's rules: kubetide.model.validation


OBJECT_VALIDATORS: dict[str, ObjectValidator] = {
    "Deployment": _scale_target,
    "ReplicaSet": _scale_target,
    "StatefulSet": _scale_target,
    "HorizontalPodAutoscaler": _hpa,
    "PodDisruptionBudget": _pdb,
    "DaemonSet": _daemon_set,
    "Job": _job,
    "Pod": _pod,
    "ConfigMap": _config_map,
    "PodTemplate": _pod_template_object,
    # The capacity APIs (autoscaling.x-k8s.io): their views check the CRDs' rules, every problem at once.
    "CapacityBuffer": CapacityBuffer.from_manifest,
    "ProvisioningRequest": ProvisioningRequest.from_manifest,
    "CapacityQuota": CapacityQuota.from_manifest,
}


def register_object_validator(
    kind: str, validator: ObjectValidator, api_versions: tuple[str, ...] = ()
) -> None:
    """Support (or re-check) a kind; ``api_versions`` empty keeps the known ones (or accepts any)."""
    OBJECT_VALIDATORS[kind] = validator
    if api_versions:
        API_VERSIONS[kind] = api_versions
