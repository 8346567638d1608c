"""ProvisioningRequests as the loop handles them: which this autoscaler serves, their conditions, their pods.

- :func:`supported_class` / :func:`supported_check_capacity_class`: ``provisioningrequest/supported_classes.go``
  (``--check-capacity-processor-instance`` and the ``processorInstance`` parameter decide who serves a
  check-capacity request; an instance serving one never serves best-effort-atomic requests);
- :class:`RequestState`: a request's conditions as the loop changes them (``AddOrUpdateCondition``: the
  condition replaced whole, at the loop's time, with the request's generation), and the status write;
- :func:`pods_for_request`: ``PodsForProvisioningRequest``: ``count`` pods per pod set from its
  PodTemplate, named ``<request>-<set>-<i>``, annotated with the request and its class, owned by it,
  created when it was, with the API server's defaults (requests from limits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetide.cluster.capacity.buffers.controller import defaulted_template
from kubetide.cluster.capacity.objects import CapacityWrite
from kubetide.model.capacity.conditions import Condition, find_condition, replace_condition
from kubetide.model.capacity.podtemplate import PodTemplateView, template_pod
from kubetide.model.capacity.provisioning import (
    ATOMIC_CLASS,
    CHECK_CAPACITY_CLASS,
    CLASS_ANNOTATION,
    CONSUME_ANNOTATION,
    DEPRECATED_CONSUME_ANNOTATION,
    ProvisioningRequest,
)
from kubetide.model.errors import ManifestError
from kubetide.model.pod import OwnerRef, Pod

__all__ = [
    "PROCESSOR_INSTANCE_KEY",
    "RequestState",
    "consumed_request",
    "pods_for_request",
    "supported_check_capacity_class",
    "supported_class",
]

PROCESSOR_INSTANCE_KEY = "processorInstance"


def supported_check_capacity_class(pr: ProvisioningRequest, processor_instance: str) -> bool:
    """``SupportedCheckCapacityClass``."""
    instance = pr.parameters.get(PROCESSOR_INSTANCE_KEY, "")
    if not processor_instance:
        return not instance and pr.class_name == CHECK_CAPACITY_CLASS
    if instance:
        return processor_instance == instance and pr.class_name == CHECK_CAPACITY_CLASS
    if not pr.class_name.startswith(processor_instance):
        return False
    return pr.class_name[len(processor_instance) :] == CHECK_CAPACITY_CLASS


def supported_class(pr: ProvisioningRequest, processor_instance: str) -> bool:
    """``SupportedProvisioningClass``."""
    if pr.class_name == ATOMIC_CLASS:
        return not processor_instance
    return supported_check_capacity_class(pr, processor_instance)


def consumed_request(pod: Pod) -> str | None:
    """``provisioningRequestName``: the request a pod says it consumes (the deprecated key too)."""
    notes = pod.annotations
    if not notes:
        return None
    found = notes.get(CONSUME_ANNOTATION)
    return found if found is not None else notes.get(DEPRECATED_CONSUME_ANNOTATION)


@dataclass(slots=True)
class RequestState:
    """One request during a loop: its conditions as changed so far."""

    request: ProvisioningRequest
    conditions: tuple[Condition, ...] = ()
    changed: bool = False
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (type, reason, message)

    def __post_init__(self) -> None:
        self.conditions = self.request.conditions

    def condition(self, kind: str) -> Condition | None:
        return find_condition(self.conditions, kind)

    def is_true(self, kind: str) -> bool:
        found = self.condition(kind)
        return found is not None and found.status == "True"

    def set(self, kind: str, status: str, reason: str, message: str, now: float) -> None:
        """``AddOrUpdateCondition``."""
        new = Condition(kind, status, reason, message, now, self.request.generation)
        self.conditions = replace_condition(self.conditions, new)
        self.changed = True

    def write(self) -> CapacityWrite | None:
        if not self.changed:
            return None
        pr = self.request
        body: dict[str, Any] = {"conditions": [c.to_manifest() for c in self.conditions]}
        if pr.class_details:
            body["provisioningClassDetails"] = dict(pr.class_details)
        return CapacityWrite("status", "ProvisioningRequest", pr.namespace, pr.name, pr.api_version, body)


# (request uid or key, its template views' identities) -> its pods, kept while the same templates serve.
_PODS: dict[tuple[str, str, tuple[int, ...]], tuple[tuple[PodTemplateView, ...], tuple[Pod, ...]]] = {}
_PODS_MAX = 4096


def pods_for_request(pr: ProvisioningRequest, templates: Mapping[str, PodTemplateView]) -> tuple[Pod, ...]:
    """The request's pods; ValueError naming the missing PodTemplates (``errMissingPodTemplates``)."""
    found = [templates.get(f"{pr.namespace}/{s.template}") for s in pr.pod_sets]
    if any(t is None for t in found):
        missing = [s.template for s, t in zip(pr.pod_sets, found, strict=True) if t is None]
        raise ValueError(
            f"missing pod templates, {len(pr.pod_sets)} pod templates were referenced, {len(missing)} "
            f"templates were missing: {','.join(missing)}"
        )
    views: tuple[PodTemplateView, ...] = tuple(t for t in found if t is not None)
    key = (pr.uid or pr.key, pr.key, tuple(id(v) for v in views))
    cached = _PODS.get(key)
    if cached is not None and all(a is b for a, b in zip(cached[0], views, strict=True)):
        return cached[1]
    pods = _make_pods(pr, views)
    if len(_PODS) >= _PODS_MAX:
        _PODS.clear()
    _PODS[key] = (views, pods)
    return pods


def _make_pods(pr: ProvisioningRequest, views: Sequence[PodTemplateView]) -> tuple[Pod, ...]:
    owner = OwnerRef(kind="ProvisioningRequest", name=pr.name, uid=pr.uid, controller=True)
    out: list[Pod] = []
    for i, (pod_set, view) in enumerate(zip(pr.pod_sets, views, strict=True)):
        try:  # SetDefaults_Pod: containers request what they limit
            base = template_pod(defaulted_template(view.template), pr.namespace)
        except ManifestError as exc:
            raise ValueError(f"while creating pod for pr: {pr.key} podSet: {i}, got error: {exc}") from None
        annotations = {**base.annotations, CONSUME_ANNOTATION: pr.name, CLASS_ANNOTATION: pr.class_name}
        for j in range(pod_set.count):
            name = f"{pr.name}-{i}-{j}"
            out.append(
                base.evolve(
                    name=name,
                    namespace=pr.namespace,
                    uid=f"{pr.namespace}/{name}",
                    annotations=annotations,
                    owners=(owner,),
                    creation_time=pr.creation_time,
                )
            )
    return tuple(out)
