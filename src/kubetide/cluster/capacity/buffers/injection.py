"""Buffer pods (``--capacity-buffer-pod-injection-enabled``): each ready CapacityBuffer as pending fake pods,
as CA 1.36's ``CapacityBufferPodListProcessor`` makes them.

A buffer whose status (as the controller left it) has the active strategy, says ReadyForProvisioning or
Provisioning, and names a PodTemplate of the generation it saw, gets ``status.replicas`` fake pods from
that template: named ``capacity-buffer-<buffer>-<i>``, owned by the buffer, annotated
``podType: capacityBufferFakePod`` and ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`` (CA's
builder forces it, so a buffer pod never blocks a drain of its own). Its Provisioning condition says
``FakePodsInjected``, or why none were (``NotReadyForProvisioning``, ``BufferIsEmpty``,
``FailedToGetPodTemplate``). kubetide: a buffer outside its active windows, or past its expiry, injects
none (``OutsideActiveWindows``, ``Expired``).

The pods exist only inside the loop (nothing is written to the API server, as CA's fake pods): they go
through the filter of schedulable pods after the real pods (kubetide: the lowest priority, so a real pod
always takes the capacity first), which keeps the nodes they fit on from scale-down; those that fit
nowhere trigger a scale-up. The same pods are handed out while the buffer, its count and its template
are the same, so the simulation's hints and equivalence keys carry over from loop to loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubetide.cluster.capacity.buffers.controller import status_write
from kubetide.cluster.capacity.objects import CapacityWrite
from kubetide.model.capacity.buffer import ACTIVE_STRATEGY, BufferStatus, CapacityBuffer
from kubetide.model.capacity.conditions import (
    Condition,
    is_condition_false,
    is_condition_true,
    set_status_condition,
)
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.pod import OwnerRef, Pod

__all__ = [
    "FAKE_POD_ANNOTATION",
    "FAKE_POD_VALUE",
    "PROVISIONING_CONDITION",
    "BufferPodMaker",
    "BufferPods",
    "is_buffer_pod",
]

FAKE_POD_ANNOTATION = "podType"
FAKE_POD_VALUE = "capacityBufferFakePod"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
PROVISIONING_CONDITION = "Provisioning"
_READY = "ReadyForProvisioning"


def is_buffer_pod(pod: Pod) -> bool:
    """``IsFakeCapacityBuffersPod``."""
    return bool(pod.annotations) and pod.annotations.get(FAKE_POD_ANNOTATION) == FAKE_POD_VALUE


@dataclass(frozen=True, slots=True)
class BufferPods:
    """One loop's injection: the fake pods, each buffer's pods (by ``namespace/name``), the status writes."""

    pods: tuple[Pod, ...]
    by_buffer: Mapping[str, tuple[Pod, ...]]
    writes: tuple[CapacityWrite, ...]
    buffers: Mapping[str, CapacityBuffer]


class BufferPodMaker:
    """Makes each buffer's fake pods, keeping them while nothing they come from changed."""

    def __init__(self) -> None:
        self._made: dict[str, tuple[str, int, PodTemplateView, tuple[Pod, ...]]] = {}

    def inject(
        self,
        buffers: Sequence[CapacityBuffer],
        statuses: Mapping[str, BufferStatus],
        templates: Mapping[str, PodTemplateView],
        now: float,
    ) -> BufferPods:
        """The fake pods of every buffer ready at ``now`` (``statuses``: each buffer's, as the controller
        left it this loop; a buffer missing there keeps its own)."""
        pods: list[Pod] = []
        by_buffer: dict[str, tuple[Pod, ...]] = {}
        writes: list[CapacityWrite] = []
        chosen: dict[str, CapacityBuffer] = {}
        for buffer in buffers:
            status = statuses.get(buffer.key, buffer.status)
            if status.provisioning_strategy != ACTIVE_STRATEGY:  # filterBuffersProvStrategy
                continue
            conditions = status.conditions
            if not (
                is_condition_true(conditions, _READY) or is_condition_true(conditions, PROVISIONING_CONDITION)
            ):
                continue  # statusFilter: neither ready nor provisioning
            template = (
                templates.get(f"{buffer.namespace}/{status.pod_template_ref}")
                if status.pod_template_ref
                else None
            )
            if (
                template is not None
                and status.pod_template_generation is not None
                and template.generation != status.pod_template_generation
            ):
                continue  # podTemplateGenFilter: the controller has not seen this template yet
            made, reason, message = self._provision(buffer, status, template, now)
            chosen[buffer.key] = buffer
            if reason is None:
                condition = Condition(PROVISIONING_CONDITION, "True", "FakePodsInjected", "", now)
            else:
                condition = Condition(PROVISIONING_CONDITION, "False", reason, message, now)
            updated, changed = set_status_condition(conditions, condition)
            if changed:
                new = BufferStatus(
                    status.pod_template_ref,
                    status.replicas,
                    status.pod_template_generation,
                    updated,
                    status.provisioning_strategy,
                )
                writes.append(status_write(buffer, new))
            if made:
                by_buffer[buffer.key] = made
                pods.extend(made)
        gone = [k for k in self._made if k not in chosen]
        for key in gone:
            del self._made[key]
        return BufferPods(tuple(pods), by_buffer, tuple(writes), chosen)

    def _provision(
        self, buffer: CapacityBuffer, status: BufferStatus, template: PodTemplateView | None, now: float
    ) -> tuple[tuple[Pod, ...], str | None, str]:
        """``provision``: (the pods, or the reason and message of none)."""
        if (
            status.pod_template_ref is None
            or status.replicas is None
            or is_condition_false(status.conditions, _READY)
        ):
            return (), "NotReadyForProvisioning", "CapacityBuffer is not ready for provisioning"
        if status.replicas == 0:
            return (), "BufferIsEmpty", "CapacityBuffer has zero replicas"
        if template is None:
            return (
                (),
                "FailedToGetPodTemplate",
                (
                    "failed to get pod template with error: capacity buffer client can't get pod template: "
                    f'podtemplates "{status.pod_template_ref}" not found'
                ),
            )
        active, why = buffer.active(now)
        if not active:  # kubetide: schedules and one-shot buffers
            message = (
                "CapacityBuffer expired (kubetide.io/expires-at or expires-after)"
                if why == "Expired"
                else "CapacityBuffer is outside its kubetide.io/active-windows"
            )
            return (), why, message
        return self._pods(buffer, status.replicas, template), None, ""

    def _pods(self, buffer: CapacityBuffer, count: int, template: PodTemplateView) -> tuple[Pod, ...]:
        """``makeFakePods``, or the same pods as last loop."""
        kept = self._made.get(buffer.key)
        if kept is not None and kept[0] == buffer.uid and kept[1] == count and kept[2] == template:
            same = kept[2].pod
            if (
                same == template.pod
                and same.labels == template.pod.labels
                and same.annotations == template.pod.annotations
            ):
                return kept[3]
        base = template.pod
        uid = buffer.uid or buffer.key  # a scenario's buffer may have no uid: its key is unique too
        owner = OwnerRef("CapacityBuffer", buffer.name, buffer.uid, True)
        annotations = {**base.annotations, FAKE_POD_ANNOTATION: FAKE_POD_VALUE, SAFE_TO_EVICT: "true"}
        sample = base.evolve(
            namespace=buffer.namespace, owners=(*base.owners, owner), annotations=annotations, node_name=""
        )
        pods = tuple(
            sample.evolve(name=f"capacity-buffer-{buffer.name}-{i}", uid=f"{uid}-{i}")
            for i in range(1, count + 1)
        )
        self._made[buffer.key] = (buffer.uid, count, template, pods)
        return pods
