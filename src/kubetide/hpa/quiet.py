"""The quiet lane: the sync of a settled HPA, computed directly.

Most syncs of an HPA in a steady cluster change nothing but the controller's recommendation memory,
and now and then the current metric in the status. :class:`QuietLane` computes exactly those syncs
with plain integer arithmetic on facts cached per HPA spec and per status object, and hands every
other sync back to the general path (``HorizontalController.decide`` / ``complete``): the lane either
finishes a sync with the very effects the general path would have had, or does nothing at all.

A sync is quiet when the HPA has one ``Resource`` metric with a ``Utilization`` target and no
``behavior``; the scale reads, ``minReplicas <= current <= maxReplicas``; the selector is the one the
last sync validated, with the same pod list; every counted pod has a sample and none is pending,
unready or still initializing; the proposal, stabilized and limited, is the current count (no
rescale); and the status already holds the three conditions this sync would set, with its current
and desired replicas at the current count. Then the effects are: the recommendation recorded, and
the status written when (only) its current metric changed. Property-tested against the general path
in ``tests/hpa/test_quiet_lane.py``.

The simulator turns the lane on (its syncs are ~5x cheaper); live mode does not, because its loop
reports every sync (reconcile metrics, logs) and runs few HPAs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubetide.hpa.conditions import ConditionType
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.normalization import READY_FOR_NEW_SCALE, SCALE_DOWN_STABILIZED
from kubetide.hpa.normalize import apply_limits, record, window_highest
from kubetide.hpa.podgroups import RequestError
from kubetide.hpa.ports import PodMetric
from kubetide.hpa.replicas import _percent, _trunc_div, fdiv, int32_ceil, int64
from kubetide.hpa.state import Recommendation
from kubetide.hpa.tolerances import Tolerances, tolerances_for
from kubetide.model.hpa import HPA, HPAStatus
from kubetide.model.quantity import format_milli

__all__ = ["QuietLane"]


@dataclass(frozen=True, slots=True)
class _Spec:
    """What the lane needs of an HPA's spec (None: the HPA is not for the lane)."""

    namespace: str
    resource: str
    target: int  # averageUtilization
    active_message: str  # the ScalingActive True message this metric gives
    tolerances: Tolerances


@dataclass(frozen=True, slots=True)
class _Status:
    """What a status says, in the lane's terms (None: not a quiet sync's status)."""

    able: tuple[str, str]  # AbleToScale True: (reason, message)
    active_message: str  # ScalingActive True ValidMetricFound: message
    limited: tuple[bool, str, str]  # ScalingLimited: (status, reason, message)
    utilization: int | None  # current metric: averageUtilization
    value: str | None  # current metric: averageValue
    raw: int | None  # the milli value ``value`` was written from, when the lane wrote it


def _spec(hpa: HPA, config: HPAConfig) -> _Spec | None:
    if hpa.behavior is not None or hpa.min_replicas < 1 or len(hpa.metrics) != 1:
        return None
    metric = hpa.metrics[0]
    target = metric.target
    if (
        metric.type != "Resource"
        or metric.container
        or target is None
        or target.average_value is not None
        or target.average_utilization is None
        or target.average_utilization <= 0
    ):
        return None
    name = f"{metric.resource} resource utilization (percentage of request)"
    return _Spec(
        hpa.namespace,
        metric.resource,
        target.average_utilization,
        f"the HPA was able to successfully calculate a replica count from {name}",
        tolerances_for(hpa, config),
    )


def _status(status: HPAStatus, resource: str) -> _Status | None:
    able = active = limited = None
    for c in status.conditions:
        if c.type == ConditionType.ABLE_TO_SCALE:
            able = (c.reason, c.message) if c.status == "True" else None
        elif c.type == ConditionType.SCALING_ACTIVE:
            ok = c.status == "True" and c.reason == "ValidMetricFound"
            active = c.message if ok else None
        elif c.type == ConditionType.SCALING_LIMITED:
            limited = (c.status == "True", c.reason, c.message) if c.status in ("True", "False") else None
    if able is None or active is None or limited is None:
        return None
    utilization = value = None
    metrics = status.current_metrics
    if len(metrics) == 1:
        current = _resource_current(metrics[0], resource)
        if current is not None:
            utilization, value = current
    return _Status(able, active, limited, utilization, value, None)


def _resource_current(metric: Mapping[str, Any], resource: str) -> tuple[int, str] | None:
    """(averageUtilization, averageValue) of a status entry exactly as the lane would write it."""
    if metric.keys() != {"type", "resource"} or metric["type"] != "Resource":
        return None
    source = metric["resource"]
    if not isinstance(source, dict) or source.keys() != {"name", "current"} or source["name"] != resource:
        return None
    current = source["current"]
    if not isinstance(current, dict) or current.keys() != {"averageUtilization", "averageValue"}:
        return None
    utilization, value = current["averageUtilization"], current["averageValue"]
    if type(utilization) is not int or type(value) is not str:
        return None
    return utilization, value


def _value_total(samples: Mapping[str, PodMetric]) -> int:
    total = getattr(samples, "total_value", None)  # O(1) where the source knows it (the simulator's)
    if total is not None:
        return int(total())
    return sum(m.value for m in samples.values())


@dataclass(frozen=True, slots=True)
class QuietSync:
    """A finished quiet sync: the status to write (None: unchanged, nothing to write)."""

    status: HPAStatus | None


_UNCHANGED = QuietSync(None)


class QuietLane:
    """Finishes quiet syncs for one controller; :meth:`sync` returns None for every other sync."""

    def __init__(self, controller: HorizontalController) -> None:
        self.controller = controller
        self._specs: dict[str, tuple[HPA, _Spec | None]] = {}
        self._statuses: dict[str, tuple[HPAStatus, _Status | None]] = {}

    def forget(self, key: str) -> None:
        self._specs.pop(key, None)
        self._statuses.pop(key, None)

    def sync(self, hpa: HPA, now: float) -> QuietSync | None:
        """Finish ``hpa``'s sync if it is quiet; change nothing and return None otherwise.

        The recommendation is committed here; the caller writes the returned status, if any, as it
        writes the general path's (a failed write is reported the same way).
        """
        key = hpa.key
        ctrl = self.controller
        cached = self._specs.get(key)
        if cached is None or cached[0] is not hpa:
            spec = _spec(hpa, ctrl.config)
            self._specs[key] = (hpa, spec)
        else:
            spec = cached[1]
        if spec is None:
            return None
        old = hpa.status
        facts_cached = self._statuses.get(key)
        if facts_cached is None or facts_cached[0] is not old:
            facts = _status(old, spec.resource)
            self._statuses[key] = (old, facts)
        else:
            facts = facts_cached[1]
        if facts is None or facts.active_message != spec.active_message:
            return None

        memory = ctrl.memory(key)
        if memory is None or not memory.recommendations:
            return None
        targets = ctrl.targets
        try:
            scale = targets.get_scale(spec.namespace, hpa.scale_target_ref)
        except Exception:  # ScaleError or worse: the general path reports it
            return None
        current = scale.spec_replicas
        if not (hpa.min_replicas <= current <= hpa.max_replicas) or old.current_replicas != current:
            return None
        if old.desired_replicas != current:
            return None
        verdict = ctrl.selectors.unchanged(key, spec.namespace, scale.selector, targets)
        if verdict is None:
            return None
        selector, pods = verdict
        try:
            samples = ctrl.metrics.resource_metrics(spec.namespace, selector, spec.resource, "")
            if pods is None:
                pods = targets.list_pods(spec.namespace, selector)
        except Exception:  # MetricsError or worse: the general path reports it
            return None
        if not pods:
            return None
        config = ctrl.config
        index = ctrl.pod_index(key, pods)
        if not index.settled(samples, spec.resource, now, config.cpu_initialization_period):
            return None
        try:
            request_total = index.active_request_total(spec.resource, "", config.gates.pod_level_resources)
        except RequestError:
            return None
        total_usage = int64(_value_total(samples))
        total_request = int64(request_total)
        if total_request == 0:
            return None
        utilization = _percent(total_usage, total_request)
        ratio = fdiv(float(utilization), float(spec.target))
        if spec.tolerances.within(ratio):
            proposal = current
        else:
            proposal = int32_ceil(ratio * len(index.active))
        if proposal < 0:
            proposal = 0  # combine keeps the count at 0 when a metric proposes less

        # Downscale stabilization (the no-behavior path), without writing yet.
        recommendations = memory.recommendations
        stabilized, stale = window_highest(recommendations, proposal, now - config.downscale_stabilization)
        able = READY_FOR_NEW_SCALE if stabilized == proposal else SCALE_DOWN_STABILIZED
        desired, reason, message = apply_limits(
            current,
            stabilized,
            hpa.min_replicas,
            hpa.max_replicas,
            config.scale_up_limit_factor,
            config.scale_up_limit_minimum,
        )
        if desired != current:
            return None  # a rescale: the general path decides, writes and reports it
        if facts.able != able or facts.limited != (desired != stabilized, reason, message):
            return None

        raw = _trunc_div(total_usage, len(samples))
        status: HPAStatus | None = None
        if facts.utilization != utilization or (
            raw != facts.raw if facts.raw is not None else format_milli(raw) != facts.value
        ):
            value = format_milli(raw)  # a new current metric: the status is written
            metric: dict[str, object] = {
                "type": "Resource",
                "resource": {
                    "name": spec.resource,
                    "current": {"averageUtilization": utilization, "averageValue": value},
                },
            }
            status = HPAStatus(current, current, old.conditions, old.last_scale_time, (metric,))
            self._statuses[key] = (
                status,
                _Status(facts.able, facts.active_message, facts.limited, utilization, value, raw),
            )
        record(recommendations, Recommendation(proposal, now), stale)
        return _UNCHANGED if status is None else QuietSync(status)
