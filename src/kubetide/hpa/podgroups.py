"""Which pods a metric counts: ready, unready, missing a sample, or ignored (``groupPods``), and the
per-pod requests a Utilization target divides by (``calculateRequests``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubetide.hpa.ports import NEVER, PodMetric
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, MEMORY

__all__ = ["PodGroups", "RequestError", "group_pods", "pod_requests_milli", "sample_before"]


class RequestError(Exception):
    """A pod's request can't be computed (missing request, unknown container)."""


@dataclass(frozen=True, slots=True)
class PodGroups:
    ready_count: int
    unready: frozenset[str]
    missing: frozenset[str]
    ignored: frozenset[str]
    # True when the samples are exactly the counted pods: none missing, none extra, none excluded.
    exact: bool = False


def group_pods(
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    resource: str,
    now: float,
    cpu_initialization_period: float,
    initial_readiness_delay: float,
) -> PodGroups:
    """Classify each pod, in upstream's order: ignored, unready (Pending), missing, cpu readiness, ready.

    Readiness beyond Pending only matters for the ``cpu`` resource: a pod still initializing is
    unready if not Ready or if a full metric window hasn't passed since it became Ready; an older pod
    only if it is not Ready and has never been Ready.
    """
    ready = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    is_cpu = resource == CPU
    for pod in pods:
        phase = pod.phase
        if pod.deletion_time is not None or phase == "Failed" or phase == "Succeeded":
            ignored.add(pod.name)
            continue
        if phase == "Pending":
            unready.add(pod.name)
            continue
        metric = metrics.get(pod.name)
        if metric is None:
            missing.add(pod.name)
            continue
        if is_cpu and _cpu_unready(pod, metric, now, cpu_initialization_period, initial_readiness_delay):
            unready.add(pod.name)
            continue
        ready += 1
    return PodGroups(ready, frozenset(unready), frozenset(missing), frozenset(ignored))


def _cpu_unready(pod: Pod, metric: PodMetric, now: float, init_period: float, readiness_delay: float) -> bool:
    if pod.ready is None or pod.start_time is None:
        return True
    transition = pod.ready_transition if pod.ready_transition is not None else NEVER
    if pod.start_time + init_period > now:
        # Still initializing: a sample counts only once a whole window has passed since Ready.
        return pod.ready is False or sample_before(metric.timestamp, transition, metric.window)
    # Unready and never been ready since start (plus the readiness delay).
    return pod.ready is False and pod.start_time + readiness_delay > transition


def sample_before(timestamp: float, transition: float, window: float) -> bool:
    """``metric.Timestamp.Before(transition.Add(window))``.

    Unset times are Go's zero time (``NEVER``). That is a real instant, so a sample stamped with it is
    before ``zero + window`` whenever the window is positive, although ``-inf < -inf + window`` is not.
    """
    if timestamp == NEVER and transition == NEVER:
        return window > 0
    return timestamp < transition + window


def pod_requests_milli(
    pods: Sequence[Pod], resource: str, container: str, pod_level_resources: bool
) -> dict[str, int]:
    """Per-pod request of ``resource`` in milli-units; one bad pod fails the whole metric."""
    return {pod.name: _pod_request(pod, resource, container, pod_level_resources) for pod in pods}


def _pod_request(pod: Pod, resource: str, container: str, pod_level_resources: bool) -> int:
    cache = pod.__dict__.setdefault("_hpa_requests", {})
    key = (resource, container, pod_level_resources)
    cached: int | str | None = cache.get(key)
    if cached is None:
        try:
            cached = _compute_request(pod, resource, container, pod_level_resources)
        except RequestError as exc:
            cached = str(exc)
        cache[key] = cached
    if isinstance(cached, str):
        raise RequestError(cached)
    return cached


def _compute_request(pod: Pod, resource: str, container: str, pod_level_resources: bool) -> int:
    if pod_level_resources and not container and _pod_level_requests_set(pod):
        # A named container wins over pod-level requests. Otherwise hpa.md 2.2: the pod-level request
        # for R, and a pod declaring pod-level requests but not R fails the metric. (Upstream reads
        # PodRequests, which would fill R in from the containers; the spec rules where they differ.)
        request = pod.pod_request_milli(resource)
        if request is None:
            raise RequestError(f"missing pod-level request for {resource} in Pod {pod.name}")
        return request
    total = 0
    for c in (*pod.containers, *(c for c in pod.init_containers if c.restartable)):
        if not container or container == c.name:
            request = c.request_milli(resource)
            if request is None:
                raise RequestError(f"missing request for {resource} in container {c.name} of Pod {pod.name}")
            total += request
        if container == c.name:
            return total
    if container:
        raise RequestError(f"container {container} not found in Pod {pod.name}")
    return total


def _pod_level_requests_set(pod: Pod) -> bool:
    """``IsPodLevelRequestsSet``: pod-level requests name a resource supported at pod level."""
    names: list[str] = list(
        pod.pod_requests_milli if pod.pod_requests_milli is not None else (pod.pod_requests or ())
    )
    return any(n in _POD_LEVEL or n.startswith("hugepages-") for n in names)


_POD_LEVEL = frozenset((CPU, MEMORY))
