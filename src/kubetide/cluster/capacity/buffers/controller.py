"""The CapacityBuffer controller (``--capacity-buffer-controller-enabled``): from each buffer's spec, the pod
template its fake pods are made from and how many there are, in the buffer's status, as CA 1.36's
``capacitybuffer/controller`` and ``translators`` decide it.

Buffers of the active strategy (``buffer.x-k8s.io/active-capacity``, or none) are translated, per
namespace oldest first: a ``podTemplateRef`` buffer from its PodTemplate, a ``scalableRef`` buffer from
its workload's most recent pod (through the scale subresource) or else its pod template
(``resolveSpecAndReplicas``). The pod is defaulted as CA's ``DefaultingResolver`` does (container
requests from limits) and written as the managed PodTemplate ``capacitybuffer-<name>-pod-template``,
owned by the buffer (``EnsurePodTemplate``: created, or updated when its template differs). The number
of chunks (``getBufferNumberOfPods``) is the smallest of ``replicas``, ``percentage`` of the workload's
replicas (rounded down) and what fits in ``limits``; none given is an error. The status then says
``ReadyForProvisioning`` True (``AttributesSetSuccessfully``) with the template's name and generation,
or False (``error``) with why.

A managed template written this loop is read back next loop before the status names its generation,
so the status never names a generation the API server has not given (kubetide's controller runs in
the loop, CA's in its own goroutine: either way the status follows the template).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kubetide.cluster.capacity.objects import CapacityObjects, CapacityWrite, ScalableObject
from kubetide.model.capacity.buffer import ACTIVE_STRATEGY, BufferStatus, CapacityBuffer
from kubetide.model.capacity.conditions import Condition, set_status_condition
from kubetide.model.capacity.podtemplate import PodTemplateView, template_pod
from kubetide.model.errors import ManifestError
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU

__all__ = [
    "ATTRIBUTES_SET_REASON",
    "BUFFER_KINDS",
    "READY_CONDITION",
    "BufferTranslation",
    "buffer_number_of_pods",
    "defaulted_template",
    "managed_template_name",
    "status_write",
    "translate_buffers",
]

READY_CONDITION = "ReadyForProvisioning"
ATTRIBUTES_SET_REASON = "AttributesSetSuccessfully"
_NOT_READY_REASON = "error"
_TEMPLATE_PREFIX, _TEMPLATE_SUFFIX = "capacitybuffer-", "-pod-template"
_MAX_BUFFER_NAME = 253 - len(_TEMPLATE_PREFIX) - len(_TEMPLATE_SUFFIX)
_SERVICE_ACCOUNT_VOLUME_PREFIX = "kube-api-access-"
_INT32_MAX = 2**31 - 1
# scalable_object_resolvers.go: the kinds whose pod template CA reads, by (apiGroup, kind).
BUFFER_KINDS = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "StatefulSet"),
        ("core", "ReplicationController"),
        ("batch", "Job"),
    }
)
# The strategies the default controller translates (InitializeAndRunDefaultBufferController).
DEFAULT_STRATEGIES = frozenset({ACTIVE_STRATEGY, ""})


@dataclass(frozen=True, slots=True)
class BufferTranslation:
    """The controller's answer for one loop: each buffer's status (by ``namespace/name``), the writes it
    needs (statuses that changed, managed templates), and the errors it logged."""

    statuses: Mapping[str, BufferStatus]
    writes: tuple[CapacityWrite, ...]
    errors: tuple[str, ...] = ()


def status_write(buffer: CapacityBuffer, status: BufferStatus) -> CapacityWrite:
    """The write that makes ``status`` the buffer's."""
    return CapacityWrite(
        "status", "CapacityBuffer", buffer.namespace, buffer.name, buffer.api_version, status.to_manifest()
    )


def _without_token_volume(items: Any) -> list[Any]:
    """The volumes or mounts other than the service account's token (``kube-api-access-*``)."""
    return [
        v
        for v in items or ()
        if not str((v or {}).get("name", "")).startswith(_SERVICE_ACCOUNT_VOLUME_PREFIX)
    ]


def managed_template_name(buffer_name: str) -> str:
    """``getPodTemplateNameForBuffer``: the buffer's name cut to fit a name of 253 characters."""
    return _TEMPLATE_PREFIX + buffer_name[:_MAX_BUFFER_NAME] + _TEMPLATE_SUFFIX


def defaulted_template(template: Mapping[str, Any]) -> dict[str, Any]:
    """``DefaultingResolver.Resolve`` then ``getPodTemplateSpecFromPod``: a PodTemplateSpec whose containers
    request what they limit (where they request nothing), pod-level requests defaulted likewise, and the
    service account's token volume (``kube-api-access-*``) and its mounts left out."""
    meta = template.get("metadata") or {}
    spec = copy.deepcopy(dict(template.get("spec") or {}))
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or ():
            if not isinstance(container, dict):
                continue
            resources = container.setdefault("resources", {})
            requests = resources.setdefault("requests", {})
            for name, quantity in (resources.get("limits") or {}).items():
                requests.setdefault(name, quantity)
            if not requests:
                del resources["requests"]
            if not resources:
                del container["resources"]
            mounts = _without_token_volume(container.get("volumeMounts"))
            if mounts:
                container["volumeMounts"] = mounts
            else:
                container.pop("volumeMounts", None)
    pod_resources = spec.get("resources")
    if isinstance(pod_resources, dict) and pod_resources.get("limits"):
        requests = pod_resources.setdefault("requests", {})
        for name, quantity in pod_resources["limits"].items():
            requests.setdefault(name, quantity)
    volumes = _without_token_volume(spec.get("volumes"))
    if volumes:
        spec["volumes"] = volumes
    else:
        spec.pop("volumes", None)
    spec.pop("nodeName", None)
    out: dict[str, Any] = {"metadata": {}, "spec": spec}
    if meta.get("labels"):
        out["metadata"]["labels"] = dict(meta["labels"])
    if meta.get("annotations"):
        out["metadata"]["annotations"] = dict(meta["annotations"])
    return out


def _int32(value: int) -> int:
    """Go's ``int32(x)`` of an int64: the low 32 bits, signed."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _milli(pod_requests: Mapping[str, int], name: str) -> int:
    value = pod_requests[name]
    return value if name == CPU else value * 1000


def buffer_number_of_pods(buffer: CapacityBuffer, pod: Pod, scalable_replicas: int | None) -> int:
    """``getBufferNumberOfPods``: the smallest of replicas, percentage (of the workload's replicas,
    rounded down) and what the limits allow; ValueError when none of them is given (or the limits name
    no resource the pod requests)."""
    replicas, resolved = _INT32_MAX, False
    if buffer.replicas is not None:
        replicas, resolved = min(replicas, max(0, buffer.replicas)), True
    if buffer.percentage is not None and scalable_replicas is not None:
        replicas = min(replicas, max(0, _int32(buffer.percentage * scalable_replicas) // 100))
        resolved = True
    if buffer.limits is not None:
        replicas, resolved = min(replicas, _pods_within_limits(pod, buffer.limits)), True
    if not resolved:
        raise ValueError("replicas, percentage and limits are not defined")
    return replicas


def _pods_within_limits(pod: Pod, limits: Mapping[str, Any]) -> int:
    """``calculateMaxPodsFromLimits``: per resource the pod requests and the limits name,
    ``int32(limit milli / request milli)`` (a value that overflows negative is skipped)."""
    requests = pod.requests
    most, found = _INT32_MAX, False
    for name in requests:
        request = _milli(requests, name)
        if request <= 0 or name not in limits:
            continue
        pods = _int32(limits[name].milli // request)
        if pods < 0:
            continue
        most, found = min(most, pods), True
    if not found:
        raise ValueError("resources in configured limits not found in the pod template")
    return most


def _ready(buffer: CapacityBuffer, ref: str, generation: int, replicas: int, now: float) -> BufferStatus:
    """``SetBufferAsReadyForProvisioning``."""
    condition = Condition(READY_CONDITION, "True", ATTRIBUTES_SET_REASON, "ready", now)
    conditions, _ = set_status_condition(buffer.status.conditions, condition)
    return BufferStatus(ref, replicas, generation, conditions, _strategy(buffer))


def _not_ready(
    buffer: CapacityBuffer,
    error: str,
    now: float,
    ref: str | None = None,
    generation: int | None = None,
) -> BufferStatus:
    """``SetBufferAsNotReadyForProvisioning``."""
    message = f"Buffer not ready for provisioning: {error}" if error else "Buffer not ready for provisioning"
    condition = Condition(READY_CONDITION, "False", _NOT_READY_REASON, message, now)
    conditions, _ = set_status_condition(buffer.status.conditions, condition)
    return BufferStatus(ref, None, generation, conditions, _strategy(buffer))


def _strategy(buffer: CapacityBuffer) -> str | None:
    """``mapEmptyProvStrategyToDefault``: an empty strategy is the default one."""
    strategy = buffer.provisioning_strategy
    return ACTIVE_STRATEGY if strategy == "" else strategy


def _scalable_template(
    buffer: CapacityBuffer, objects: CapacityObjects
) -> tuple[Mapping[str, Any], int | None, bool]:
    """``resolveSpecAndReplicas``: (the template, the workload's replicas, whether the template still
    needs defaulting). The scale subresource's most recent pod first (not defaulted: it is a real pod),
    else the workload's own template for the kinds CA reads; ValueError says why neither was had."""
    ref = buffer.scalable_ref
    assert ref is not None
    found: ScalableObject | None = objects.scalables.get(
        (ref.api_group, ref.kind, buffer.namespace, ref.name)
    )
    live_error = None
    if found is None or found.scale_replicas is None:
        live_error = (
            f"failed to get scale object: {ref.kind} {buffer.namespace}/{ref.name} has no scale subresource"
        )
    elif found.recent_pod is not None:
        return found.recent_pod, found.scale_replicas, False
    if (ref.api_group, ref.kind) not in BUFFER_KINDS:
        error = f"kind {ref.api_group}/{ref.kind} is not supported to use pod template"
    elif found is None or found.template is None:
        error = f'failed to get {ref.kind}: {ref.kind.lower()}s "{ref.name}" not found'
    else:
        return found.template, found.template_replicas, True
    if live_error is not None:
        raise ValueError(
            f"failed to resolve live pod: {live_error}, failed to resolve scalable object: {error}"
        )
    raise ValueError(f"failed to resolve scalable object: {error}")


def _managed(buffer: CapacityBuffer, spec: Mapping[str, Any]) -> dict[str, Any]:
    """``getPodTemplateFromSpec``: the managed PodTemplate, owned by the buffer."""
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {
            "name": managed_template_name(buffer.name),
            "namespace": buffer.namespace,
            "ownerReferences": [
                {
                    "apiVersion": "autoscaling.x-k8s.io/v1beta1",
                    "kind": "CapacityBuffer",
                    "name": buffer.name,
                    "uid": buffer.uid,
                    "controller": True,
                }
            ],
        },
        "template": dict(spec),
    }


def _same_pod(a: Pod, b: Pod) -> bool:
    """Templates that make the same pod (as kubetide reads pods): the API server's defaults do not count."""
    return a == b and a.labels == b.labels and a.annotations == b.annotations


# A buffer's last translation, kept while the very same objects come again (the caches hand out the
# same view while an object is unchanged): the buffer, its source template or workload, its managed
# template, and the answer.
_Inputs = tuple[CapacityBuffer, object, object]
_Answer = tuple[BufferStatus | None, CapacityWrite | None, str | None]
Memo = dict[str, tuple[_Inputs, _Answer]]


def translate_buffers(
    buffers: Sequence[CapacityBuffer], objects: CapacityObjects, now: float, memo: Memo | None = None
) -> BufferTranslation:
    """The controller's reconcile of every namespace (``reconcileNamespace``), for the loop at ``now``.
    ``memo``: the last answers, reused for a buffer whose objects are the very same as then (so the
    same answer), and updated."""
    chosen = [b for b in buffers if (b.provisioning_strategy or "") in DEFAULT_STRATEGIES]
    chosen.sort(key=lambda b: (b.namespace, b.creation_time or 0.0, b.name))
    statuses: dict[str, BufferStatus] = {}
    writes: list[CapacityWrite] = []
    errors: list[str] = []
    seen: set[str] = set()
    for buffer in chosen:
        inputs = (buffer, *_sources(buffer, objects))
        kept = memo.get(buffer.key) if memo is not None else None
        if kept is not None and all(a is b for a, b in zip(kept[0], inputs, strict=True)):
            status, write, error = kept[1]
        else:
            status, write, error = _translate(buffer, objects, now)
            if memo is not None:
                memo[buffer.key] = (inputs, (status, write, error))
        seen.add(buffer.key)
        if error:
            errors.append(f"capacity buffer controller error: {buffer.key}: {error}")
        if write is not None:
            writes.append(write)
        if status is None:  # the managed template changes this loop: the status follows next loop
            statuses[buffer.key] = buffer.status
            continue
        statuses[buffer.key] = status
        if status != buffer.status:
            writes.append(status_write(buffer, status))
    if memo is not None:
        for key in [k for k in memo if k not in seen]:
            del memo[key]
    return BufferTranslation(statuses, tuple(writes), tuple(errors))


def _sources(buffer: CapacityBuffer, objects: CapacityObjects) -> tuple[object, object]:
    """What a buffer is translated from besides itself: its template or workload, its managed template."""
    if buffer.pod_template_ref is not None:
        source: object = objects.pod_templates.get(f"{buffer.namespace}/{buffer.pod_template_ref}")
    elif buffer.scalable_ref is not None:
        ref = buffer.scalable_ref
        source = objects.scalables.get((ref.api_group, ref.kind, buffer.namespace, ref.name))
    else:
        source = None
    return source, objects.pod_templates.get(f"{buffer.namespace}/{managed_template_name(buffer.name)}")


def _translate(
    buffer: CapacityBuffer, objects: CapacityObjects, now: float
) -> tuple[BufferStatus | None, CapacityWrite | None, str | None]:
    if buffer.pod_template_ref is not None:
        source = objects.pod_templates.get(f"{buffer.namespace}/{buffer.pod_template_ref}")
        if source is None:
            error = (
                f'capacity buffer client can\'t get pod template: podtemplates "{buffer.pod_template_ref}" '
                "not found"
            )
            return _not_ready(buffer, error, now), None, error
        spec, replicas, needs_defaults = source.template, None, True
    elif buffer.scalable_ref is not None:
        try:
            spec, replicas, needs_defaults = _scalable_template(buffer, objects)
        except ValueError as exc:
            return _not_ready(buffer, str(exc), now), None, str(exc)
    else:
        return buffer.status, None, None  # no translator takes it (as upstream: the status is left alone)
    wanted = defaulted_template(spec) if needs_defaults else _as_template_spec(spec)
    name = managed_template_name(buffer.name)
    try:
        pod = template_pod(wanted, buffer.namespace)
    except ManifestError as exc:
        error = f"failed to create fake pod: {exc}"
        return _not_ready(buffer, error, now), None, error
    existing: PodTemplateView | None = objects.pod_templates.get(f"{buffer.namespace}/{name}")
    if existing is None or not _same_pod(existing.pod, pod) or _owner_differs(existing, buffer):
        body = _managed(buffer, wanted)
        return None, CapacityWrite("pod-template", "PodTemplate", buffer.namespace, name, "v1", body), None
    try:
        count = buffer_number_of_pods(buffer, existing.pod, replicas)
    except ValueError as exc:
        message = f"couldn't get number of replicas for buffer: {exc}"
        return _not_ready(buffer, message, now, name, existing.generation), None, None
    return _ready(buffer, name, existing.generation, count, now), None, None


def _owner_differs(existing: PodTemplateView, buffer: CapacityBuffer) -> bool:
    owner = existing.owner
    return (
        owner is None
        or owner.kind != "CapacityBuffer"
        or owner.name != buffer.name
        or owner.uid != buffer.uid
    )


def _as_template_spec(pod: Mapping[str, Any]) -> dict[str, Any]:
    """``buildPodTemplateFromPod``: a pod's labels, annotations and spec, its node name cleared."""
    meta = pod.get("metadata") or {}
    spec = copy.deepcopy(dict(pod.get("spec") or {}))
    spec.pop("nodeName", None)
    out: dict[str, Any] = {"metadata": {}, "spec": spec}
    if meta.get("labels"):
        out["metadata"]["labels"] = dict(meta["labels"])
    if meta.get("annotations"):
        out["metadata"]["annotations"] = dict(meta["annotations"])
    return out


def with_status(buffer: CapacityBuffer, status: BufferStatus) -> CapacityBuffer:
    return replace(buffer, status=status)
