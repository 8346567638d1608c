"""What the agent does to a pod bound to a node it owns, as a pure function of the pod and ``now``.

The kubelet's lifecycle, shortened: a bound pod is Running at once with its containers started; Ready
after its ``kubetide.io/startup-delay`` (a Go duration; none = at once); a Job's pod Succeeds after its
``kubetide.io/duration``; a pod being deleted stays Terminating as a kubelet keeps it: it is confirmed
deleted (grace period 0) once its containers have stopped, which is at the end of its grace period (its
``deletionTimestamp``, which the API server sets to the request time plus the grace period: a process
that ignores SIGTERM is killed then) or, with ``kubetide.io/termination-delay`` (a Go duration), that
long after the deletion was asked for if sooner (a process that takes that long to shut down). A
finished pod being deleted is confirmed at once: it has no containers left to stop. Bad annotation
values are treated as absent (the pod then behaves as a plain pod), never as a crash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubetide.live.agent.api import Obj
from kubetide.live.agent.timefmt import format_time, parse_time
from kubetide.model.durations import DurationError, parse_duration

__all__ = [
    "DURATION_ANNOTATION",
    "STARTUP_DELAY_ANNOTATION",
    "TERMINATION_DELAY_ANNOTATION",
    "Delete",
    "PatchStatus",
    "PodAction",
    "next_action",
]

STARTUP_DELAY_ANNOTATION = "kubetide.io/startup-delay"
DURATION_ANNOTATION = "kubetide.io/duration"
TERMINATION_DELAY_ANNOTATION = "kubetide.io/termination-delay"


@dataclass(frozen=True, slots=True)
class PatchStatus:
    """Patch the pod's status subresource; ``why`` is for the log."""

    patch: Obj
    why: str


@dataclass(frozen=True, slots=True)
class Delete:
    """Confirm the deletion (grace period 0)."""

    why: str


PodAction = PatchStatus | Delete | None


def annotation_seconds(pod: Obj, key: str) -> float | None:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(key)
    if not isinstance(value, str):
        return None
    try:
        return parse_duration(value)
    except DurationError:
        return None


def is_job_pod(pod: Obj) -> bool:
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    return any(o.get("kind") == "Job" and o.get("controller", True) for o in owners)


def next_action(pod: Obj, now: float, host_ip: str, new_pod_ip: str) -> PodAction:
    """The one thing to do to ``pod`` now, or None. ``new_pod_ip`` is used only if it has no IP yet."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    phase = status.get("phase", "Pending")
    deleting = parse_time(meta.get("deletionTimestamp"))
    if deleting is not None:
        if phase in ("Succeeded", "Failed"):
            return Delete("pod finished")
        if now >= deleting:
            return Delete("grace period over")
        stopped = _stopped_at(pod, deleting)
        if stopped is not None and now >= stopped:
            return Delete("containers stopped")
        return None
    if phase in ("Succeeded", "Failed"):
        return None
    started = parse_time(status.get("startTime"))
    if phase != "Running" or started is None:
        delay = annotation_seconds(pod, STARTUP_DELAY_ANNOTATION) or 0.0
        ip = status.get("podIP") or new_pod_ip
        return PatchStatus(_running(pod, now, now, host_ip, ip, ready=delay <= 0), "started")
    if is_job_pod(pod):
        duration = annotation_seconds(pod, DURATION_ANNOTATION)
        if duration is not None and now >= started + duration:
            return PatchStatus(_succeeded(pod, started, now), "job pod completed")
    if not _is_ready(status):
        delay = annotation_seconds(pod, STARTUP_DELAY_ANNOTATION) or 0.0
        if now >= started + delay:
            ip = status.get("podIP") or new_pod_ip
            host = status.get("hostIP") or host_ip
            return PatchStatus(_running(pod, started, now, host, ip, ready=True), "startup delay over")
    return None


def _stopped_at(pod: Obj, deleting: float) -> float | None:
    """When the pod's containers stop of their own accord after the deletion request (its
    ``kubetide.io/termination-delay`` after it); None: only the end of the grace period stops them."""
    delay = annotation_seconds(pod, TERMINATION_DELAY_ANNOTATION)
    grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds")
    if delay is None or isinstance(grace, bool) or not isinstance(grace, int | float):
        return None
    return deleting - grace + delay  # the request time is deletionTimestamp minus the grace period


def _is_ready(status: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def _condition(pod: Obj, kind: str, value: bool, now: float, reason: str = "") -> dict[str, Any]:
    text = "True" if value else "False"
    old = next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)
    transition = old.get("lastTransitionTime") if old and old.get("status") == text else None
    result: dict[str, Any] = {
        "type": kind,
        "status": text,
        "lastProbeTime": None,
        "lastTransitionTime": transition or format_time(now),
    }
    if reason:
        result["reason"] = reason
    return result


def _containers(pod: Obj, key: str) -> list[Obj]:
    return list((pod.get("spec") or {}).get(key) or [])


def _container_id(pod: Obj, container: Obj) -> str:
    return f"kubetide://{(pod.get('metadata') or {}).get('uid', '')}/{container.get('name', '')}"


def _running(pod: Obj, started: float, now: float, host_ip: str, pod_ip: str, *, ready: bool) -> Obj:
    started_at = format_time(started)
    not_ready = "" if ready else "ContainersNotReady"
    containers = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": c.get("image", ""),
            "containerID": _container_id(pod, c),
            "ready": ready,
            "started": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": started_at}},
        }
        for c in _containers(pod, "containers")
    ]
    status: Obj = {
        "phase": "Running",
        "hostIP": host_ip,
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": started_at,
        "conditions": [
            _condition(pod, "Initialized", True, now),
            _condition(pod, "Ready", ready, now, not_ready),
            _condition(pod, "ContainersReady", ready, now, not_ready),
            _condition(pod, "PodScheduled", True, now),
        ],
        "containerStatuses": containers,
    }
    init = _init_statuses(pod, started_at)
    if init:
        status["initContainerStatuses"] = init
    return {"status": status}


def _init_statuses(pod: Obj, at: str) -> list[Obj]:
    return [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": c.get("image", ""),
            "containerID": _container_id(pod, c),
            "ready": True,
            "restartCount": 0,
            "state": {
                "terminated": {"exitCode": 0, "reason": "Completed", "startedAt": at, "finishedAt": at}
            },
        }
        for c in _containers(pod, "initContainers")
    ]


def _succeeded(pod: Obj, started: float, now: float) -> Obj:
    started_at, finished_at = format_time(started), format_time(now)
    containers = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": c.get("image", ""),
            "containerID": _container_id(pod, c),
            "ready": False,
            "started": False,
            "restartCount": 0,
            "state": {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": started_at,
                    "finishedAt": finished_at,
                    "containerID": _container_id(pod, c),
                }
            },
        }
        for c in _containers(pod, "containers")
    ]
    return {
        "status": {
            "phase": "Succeeded",
            "conditions": [
                _condition(pod, "Ready", False, now, "PodCompleted"),
                _condition(pod, "ContainersReady", False, now, "PodCompleted"),
            ],
            "containerStatuses": containers,
        }
    }
