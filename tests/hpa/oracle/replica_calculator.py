"""``replica_calculator.go``, ``metrics/utilization.go`` and the parts of ``metrics/client.go`` that shape
the samples, over conformance-case dicts. Errors are raised as :class:`CalcError`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .goint import MAX_INT32, MAX_INT64, ZERO_TIME, f2i32, f2i64, fdiv, gceil, i32, i64, quo

NOW = 0.0


class CalcError(Exception):
    pass


@dataclass
class PodMetric:
    value: int
    timestamp: float = ZERO_TIME
    window: float = 0.0


@dataclass(frozen=True)
class Tolerances:
    scale_down: float
    scale_up: float

    def is_within(self, ratio: float) -> bool:
        return (1.0 - self.scale_down) <= ratio and ratio <= (1.0 + self.scale_up)


def ago(v: Any) -> float | None:
    return None if v is None else NOW - float(v)


def _time(v: Any) -> float:
    t = ago(v)
    return ZERO_TIME if t is None else t


# --- metrics client -----------------------------------------------------------------------------


def resource_metrics(
    items: list[dict[str, Any]] | None, resource: str, container: str
) -> dict[str, PodMetric]:
    """``GetResourceMetric``: getContainerMetrics / getPodMetrics."""
    if not items:
        raise CalcError("no metrics returned from resource metrics API")
    res: dict[str, PodMetric] = {}
    for m in items:
        ts, window = _time(m.get("timestamp_seconds_ago")), float(m.get("window_seconds") or 0)
        containers = m.get("containers") or []
        if container:
            for c in containers:
                if c.get("name", "") == container:
                    usage = c.get("usage_milli") or {}
                    if resource in usage:
                        res[m["pod"]] = PodMetric(usage[resource], ts, window)
                    break
        else:
            pod_sum = 0
            missing = len(containers) == 0
            for c in containers:
                usage = c.get("usage_milli") or {}
                if resource not in usage:
                    missing = True
                    break
                pod_sum = i64(pod_sum + usage[resource])
            if not missing:
                res[m["pod"]] = PodMetric(pod_sum, ts, window)
    return res


def raw_metrics(samples: list[dict[str, Any]] | None) -> dict[str, PodMetric]:
    """``GetRawMetric`` (custom metrics API, pods)."""
    if not samples:
        raise CalcError("no metrics returned from custom metrics API")
    return {s["pod"]: PodMetric(s["value_milli"], NOW, 60.0) for s in samples}


# --- groupPods / calculateRequests ---------------------------------------------------------------


def group_pods(
    pods: list[dict[str, Any]],
    metrics: dict[str, PodMetric],
    resource: str,
    cpu_initialization_period: float,
    delay_of_initial_readiness_status: float,
) -> tuple[int, set[str], set[str], set[str]]:
    ready_count = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    for pod in pods:
        name = pod["name"]
        phase = pod.get("phase", "Running")
        if pod.get("deleted") or phase in ("Failed", "Succeeded"):
            ignored.add(name)
            continue
        if phase == "Pending":
            unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            missing.add(name)
            continue
        if resource == "cpu":
            ready = pod.get("ready")
            start = ago(pod.get("start_seconds_ago"))
            if ready is None or start is None:
                is_unready = True
            else:
                transition = _time(pod.get("ready_transition_seconds_ago"))
                if start + cpu_initialization_period > NOW:
                    is_unready = ready is False or metric.timestamp < transition + metric.window
                else:
                    is_unready = ready is False and start + delay_of_initial_readiness_status > transition
            if is_unready:
                unready.add(name)
                continue
        ready_count += 1
    return ready_count, unready, missing, ignored


def calculate_requests(
    pods: list[dict[str, Any]], container: str, resource: str, pod_level_resources: bool
) -> dict[str, int]:
    requests: dict[str, int] = {}
    for pod in pods:
        pod_level = pod.get("pod_requests_milli") or {}
        if pod_level_resources and pod_level and container == "":
            # Spec 2.2: the pod-level request for R, missing => error.
            if resource not in pod_level:
                raise CalcError(f"missing pod-level request for {resource} in Pod {pod['name']}")
            request = pod_level[resource]
        else:
            request = _requests_from_containers(pod, container, resource)
        requests[pod["name"]] = request
    return requests


def _requests_from_containers(pod: dict[str, Any], container: str, resource: str) -> int:
    containers = list(pod.get("containers") or [])
    for c in pod.get("initContainers") or []:
        if c.get("restartPolicy") == "Always":
            containers.append(c)
    request = 0
    for c in containers:
        if container == "" or container == c.get("name", ""):
            reqs = c.get("requests_milli") or {}
            if resource not in reqs:
                raise CalcError(
                    f"missing request for {resource} in container {c.get('name')} of Pod {pod['name']}"
                )
            request = i64(request + reqs[resource])
        if container == c.get("name", ""):
            return request
    if container != "":
        raise CalcError(f"container {container} not found in Pod {pod['name']}")
    return request


def _remove(metrics: dict[str, PodMetric], names: set[str]) -> None:
    for n in names:
        metrics.pop(n, None)


# --- utilization.go -------------------------------------------------------------------------------


def resource_utilization_ratio(
    metrics: dict[str, PodMetric], requests: dict[str, int], target_utilization: int
) -> tuple[float, int, int]:
    metrics_total = 0
    requests_total = 0
    n = 0
    for name, m in metrics.items():
        if name not in requests:
            continue
        metrics_total = i64(metrics_total + m.value)
        requests_total = i64(requests_total + requests[name])
        n += 1
    if requests_total == 0:
        raise CalcError("no metrics returned matched known pods")
    utilization = i32(quo(i64(metrics_total * 100), requests_total))
    return fdiv(float(utilization), float(target_utilization)), utilization, quo(metrics_total, n)


def metric_usage_ratio(metrics: dict[str, PodMetric], target_usage: int) -> tuple[float, int]:
    total = 0
    for m in metrics.values():
        total = i64(total + m.value)
    usage = quo(total, len(metrics))
    return fdiv(float(usage), float(target_usage)), usage


# --- ReplicaCalculator ------------------------------------------------------------------------------


@dataclass
class Calc:
    pods: list[dict[str, Any]]
    cpu_initialization_period: float
    delay_of_initial_readiness_status: float
    pod_level_resources: bool = False

    def _pod_list(self) -> list[dict[str, Any]]:
        if len(self.pods) == 0:
            raise CalcError("no pods returned by selector while calculating replica count")
        return self.pods

    def get_resource_replicas(
        self,
        current: int,
        target_utilization: int,
        resource: str,
        tol: Tolerances,
        metrics: dict[str, PodMetric],
        container: str,
    ) -> tuple[int, int, int]:
        pods = self._pod_list()
        ready_count, unready, missing, ignored = group_pods(
            pods, metrics, resource, self.cpu_initialization_period, self.delay_of_initial_readiness_status
        )
        _remove(metrics, ignored)
        _remove(metrics, unready)
        if len(metrics) == 0:
            raise CalcError("did not receive metrics for targeted pods (pods might be unready)")
        requests = calculate_requests(pods, container, resource, self.pod_level_resources)
        ratio, utilization, raw = resource_utilization_ratio(metrics, requests, target_utilization)

        scale_up_with_unready = len(unready) > 0 and ratio > 1.0
        if not scale_up_with_unready and len(missing) == 0:
            if tol.is_within(ratio):
                return current, utilization, raw
            return f2i32(gceil(ratio * float(ready_count))), utilization, raw

        if len(missing) > 0:
            if ratio < 1.0:
                fallback = max(100, target_utilization)
                for name in missing:
                    metrics[name] = PodMetric(quo(i64(requests[name] * fallback), 100))
            elif ratio > 1.0:
                for name in missing:
                    metrics[name] = PodMetric(0)
        if scale_up_with_unready:
            for name in unready:
                metrics[name] = PodMetric(0)

        new_ratio, _, _ = resource_utilization_ratio(metrics, requests, target_utilization)
        if tol.is_within(new_ratio) or (ratio < 1.0 and new_ratio > 1.0) or (ratio > 1.0 and new_ratio < 1.0):
            return current, utilization, raw
        new_replicas = f2i32(gceil(new_ratio * float(len(metrics))))
        if (new_ratio < 1.0 and new_replicas > current) or (new_ratio > 1.0 and new_replicas < current):
            return current, utilization, raw
        return new_replicas, utilization, raw

    def calc_plain_metric_replicas(
        self, metrics: dict[str, PodMetric], current: int, target_usage: int, tol: Tolerances, resource: str
    ) -> tuple[int, int]:
        pods = self._pod_list()
        ready_count, unready, missing, ignored = group_pods(
            pods, metrics, resource, self.cpu_initialization_period, self.delay_of_initial_readiness_status
        )
        _remove(metrics, ignored)
        _remove(metrics, unready)
        if len(metrics) == 0:
            raise CalcError("did not receive metrics for targeted pods (pods might be unready)")
        ratio, usage = metric_usage_ratio(metrics, target_usage)
        scale_up_with_unready = len(unready) > 0 and ratio > 1.0
        if not scale_up_with_unready and len(missing) == 0:
            if tol.is_within(ratio):
                return current, usage
            return f2i32(gceil(ratio * float(ready_count))), usage
        if len(missing) > 0:
            if ratio < 1.0:
                for name in missing:
                    metrics[name] = PodMetric(target_usage)
            elif ratio > 1.0:
                for name in missing:
                    metrics[name] = PodMetric(0)
        if scale_up_with_unready:
            for name in unready:
                metrics[name] = PodMetric(0)
        new_ratio, _ = metric_usage_ratio(metrics, target_usage)
        if tol.is_within(new_ratio) or (ratio < 1.0 and new_ratio > 1.0) or (ratio > 1.0 and new_ratio < 1.0):
            return current, usage
        new_replicas = f2i32(gceil(new_ratio * float(len(metrics))))
        if (new_ratio < 1.0 and new_replicas > current) or (new_ratio > 1.0 and new_replicas < current):
            return current, usage
        return new_replicas, usage

    def _ready_pods_count(self) -> int:
        pods = self._pod_list()
        return sum(1 for p in pods if p.get("phase", "Running") == "Running" and p.get("ready") is True)

    def usage_ratio_replica_count(self, current: int, ratio: float, tol: Tolerances) -> int:
        """``getUsageRatioReplicaCount``."""
        if current != 0:
            if tol.is_within(ratio):
                return current
            try:
                ready = self._ready_pods_count()
            except CalcError as exc:
                raise CalcError(f"unable to calculate ready pods: {exc}") from None
            f = ratio * float(ready)
            if f > MAX_INT32:
                return MAX_INT32
            return f2i32(gceil(f))
        return f2i32(gceil(ratio))

    def object_metric_replicas(
        self, current: int, target: int, usage: int, tol: Tolerances
    ) -> tuple[int, int]:
        ratio = fdiv(float(usage), float(target))
        return self.usage_ratio_replica_count(current, ratio, tol), usage

    def object_per_pod_metric_replicas(
        self, status_replicas: int, target_avg: int, usage: int, tol: Tolerances
    ) -> tuple[int, int]:
        replicas = status_replicas
        ratio = fdiv(float(usage), float(target_avg) * float(replicas))
        if not tol.is_within(ratio):
            replicas = f2i32(gceil(fdiv(float(usage), float(target_avg))))
        return replicas, per_pod_usage(usage, status_replicas)

    def external_metric_replicas(
        self, current: int, target: int, values: list[int], tol: Tolerances
    ) -> tuple[int, int]:
        usage = 0
        for v in values:
            if v > 0 and usage > MAX_INT64 - v:
                usage = MAX_INT64
                break
            usage = i64(usage + v)
        ratio = fdiv(float(usage), float(target))
        return self.usage_ratio_replica_count(current, ratio, tol), usage

    def external_per_pod_metric_replicas(
        self, status_replicas: int, target_avg: int, values: list[int], tol: Tolerances
    ) -> tuple[int, int]:
        # Spec 3.4: "total as in 3.3" (upstream's own loop here differs only for negative values,
        # which the strategies do not generate).
        usage = 0
        for v in values:
            if v > 0 and usage > MAX_INT64 - v:
                usage = MAX_INT64
                break
            usage = i64(usage + v)
        replicas = status_replicas
        ratio = fdiv(float(usage), float(target_avg) * float(replicas))
        if not tol.is_within(ratio):
            r = gceil(fdiv(float(usage), float(target_avg)))
            replicas = MAX_INT32 if r > float(MAX_INT32) else f2i32(r)
        return replicas, per_pod_usage(usage, status_replicas)


def per_pod_usage(usage: int, status_replicas: int) -> int:
    if float(usage) >= float(MAX_INT64):
        return MAX_INT64
    if status_replicas == 0:
        return 0
    return f2i64(gceil(float(usage) / float(status_replicas)))
