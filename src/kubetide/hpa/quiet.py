"""The quiet lane: the sync of a settled HPA, computed directly.

Most syncs of an HPA in a steady cluster change nothing but the controller's recommendation memory,
and now and then the current metric in the status. :class:`QuietLane` computes exactly those syncs
with plain integer arithmetic on facts cached per HPA spec and per status object, and hands every
other sync back to the general path (``HorizontalController.decide`` / ``complete``): the lane either
finishes a sync with the very effects the general path would have had, or does nothing at all.

A sync is quiet when the HPA has one ``Resource`` metric with a ``Utilization`` target and no
``behavior``; the scale reads, ``minReplicas <= current <= maxReplicas``; the selector is the one the
last sync validated, with the same pod list; every counted pod has a sample and none is pending,
unready, or initializing and not yet counted (upstream's rule for cpu); the proposal, stabilized and
limited, is the current count (no rescale); and the status already holds the three conditions this
sync would set, with its current and desired replicas at the current count. Then the effects are: the recommendation recorded, and
the status written when (only) its current metric changed. Property-tested against the general path
in ``tests/hpa/test_quiet_lane.py``.

The simulator turns the lane on (its syncs are ~5x cheaper); live mode does not, because its loop
reports every sync (reconcile metrics, logs) and runs few HPAs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetide.hpa.conditions import ConditionType
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.normalization import READY_FOR_NEW_SCALE, SCALE_DOWN_STABILIZED
from kubetide.hpa.podgroups import RequestError
from kubetide.hpa.podindex import PodIndex
from kubetide.hpa.ports import PodMetric, Scale
from kubetide.hpa.replicas import _percent, _trunc_div, int32_ceil, int64
from kubetide.hpa.state import HPAState, Recommendation
from kubetide.hpa.tolerances import Tolerances, tolerances_for
from kubetide.hpa.without_behavior import apply_limits, record, window_highest
from kubetide.model.hpa import HPA, HPAStatus
from kubetide.model.pod import Pod
from kubetide.model.quantity import format_milli
from kubetide.model.resources import CPU
from kubetide.model.selectors import LabelSelector

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


class _Plan:
    """What the full checks of a quiet sync found, kept while the objects they read are the very same
    ones (the HPA object, the scale, the pod list, the selector registry's verdict, the remembered
    state and the samples' key set): the next sync then skips them and only does the arithmetic."""

    __slots__ = (
        "active",
        "count",
        "current",
        "facts",
        "hpa",
        "index",
        "limits",
        "memory",
        "newest",
        "pods",
        "recs",
        "request_total",
        "scale",
        "selector",
        "spec",
        "stamp",
        "token",
    )

    def __init__(
        self,
        hpa: HPA,
        spec: _Spec,
        facts: _Status,
        memory: HPAState,
        recs: list[Recommendation],
        scale: Scale,
        selector: LabelSelector,
        stamp: object,
        pods: Sequence[Pod],
        index: PodIndex,
        token: object,
        count: int,
        request_total: int,
    ) -> None:
        self.hpa, self.spec, self.facts = hpa, spec, facts
        self.memory, self.recs = memory, recs
        self.scale, self.current = scale, scale.spec_replicas
        self.selector, self.stamp, self.pods = selector, stamp, pods
        self.index, self.active = index, len(index.active)
        # Pods still initializing are counted only while their samples say so: checked per sync
        # until the newest is past its cpu initialization period (from then on, for good).
        self.newest = index.by_start[0].start if spec.resource == CPU and index.by_start else -math.inf
        self.token, self.count = token, count
        self.request_total = request_total
        # apply_limits per stabilized count (the current count, bounds and config are the plan's).
        self.limits: dict[int, tuple[int, tuple[bool, str, str]]] = {}


class QuietLane:
    """Finishes quiet syncs for one controller; :meth:`sync` returns None for every other sync."""

    def __init__(self, controller: HorizontalController) -> None:
        self.controller = controller
        self._specs: dict[str, tuple[HPA, _Spec | None]] = {}
        self._statuses: dict[str, tuple[HPAStatus, _Status | None]] = {}
        self._plans: dict[str, _Plan] = {}
        self.rechecked = 0  # quiet syncs finished from a kept plan

    def forget(self, key: str) -> None:
        self._specs.pop(key, None)
        self._statuses.pop(key, None)
        self._plans.pop(key, None)

    def sync(self, hpa: HPA, now: float) -> QuietSync | None:
        """Finish ``hpa``'s sync if it is quiet; change nothing and return None otherwise.

        The recommendation is committed here; the caller writes the returned status, if any, as it
        writes the general path's (a failed write is reported the same way).
        """
        key = hpa.key
        plan = self._plans.pop(key, None)
        if plan is not None and plan.hpa is hpa:
            samples = self._recheck(plan, now)
            if samples is not None:
                self.rechecked += 1
                done = self._finish(plan, samples, now)
                if done is not None and done.status is None:
                    self._plans[key] = plan  # a written status is a new HPA object: planned afresh
                return done
        found = self._check(hpa, now)
        if found is None:
            return None
        plan, samples = found
        done = self._finish(plan, samples, now)
        if done is not None and done.status is None and plan.token is not None:
            self._plans[key] = plan
        return done

    def _recheck(self, plan: _Plan, now: float) -> Mapping[str, PodMetric] | None:
        """The samples of this sync when everything ``plan`` was made from is unchanged, else None."""
        ctrl = self.controller
        memory = ctrl.memory(plan.hpa.key)
        if memory is not plan.memory or memory.recommendations is not plan.recs or not plan.recs:
            return None
        spec = plan.spec
        targets = ctrl.targets
        try:
            if targets.get_scale(spec.namespace, plan.hpa.scale_target_ref) is not plan.scale:
                return None
            if ctrl.selectors.stamp(plan.hpa.key) != plan.stamp:
                return None
            if targets.list_pods(spec.namespace, plan.selector) is not plan.pods:
                return None
            samples = ctrl.metrics.resource_metrics(spec.namespace, plan.selector, spec.resource, "")
        except Exception:  # the full checks report nothing either: they fall back to the general path
            return None
        if getattr(samples, "key_token", None) is not plan.token:
            return None
        init_period = ctrl.config.cpu_initialization_period
        if plan.newest > now - init_period and not plan.index.initializing_counted(samples, now, init_period):
            return None
        return samples

    def _check(self, hpa: HPA, now: float) -> tuple[_Plan, Mapping[str, PodMetric]] | None:
        """Every condition of a quiet sync but the arithmetic: the plan and samples, or None."""
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
        recs = memory.recommendations
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
            request_total = int64(
                index.active_request_total(spec.resource, "", config.gates.pod_level_resources)
            )
        except RequestError:
            return None
        if request_total == 0:
            return None
        plan = _Plan(
            hpa,
            spec,
            facts,
            memory,
            recs,
            scale,
            selector,
            ctrl.selectors.stamp(key),
            pods,
            index,
            getattr(samples, "key_token", None),
            len(samples),
            request_total,
        )
        return plan, samples

    def _finish(self, plan: _Plan, samples: Mapping[str, PodMetric], now: float) -> QuietSync | None:
        """The sync's arithmetic: commit the recommendation and return the status to write, or None
        (committing nothing) when the sync rescales or sets other conditions."""
        spec, facts, current = plan.spec, plan.facts, plan.current
        config = self.controller.config
        total_usage = int64(_value_total(samples))
        utilization = _percent(total_usage, plan.request_total)
        # float64 division as Go's (the target is positive; the utilization an exact float).
        ratio = utilization / spec.target
        if spec.tolerances.within(ratio):
            proposal = current
        else:
            proposal = int32_ceil(ratio * plan.active)
        if proposal < 0:
            proposal = 0  # combine keeps the count at 0 when a metric proposes less

        # Downscale stabilization (the no-behavior path), without writing yet.
        recommendations = plan.recs
        stabilized, stale = window_highest(recommendations, proposal, now - config.downscale_stabilization)
        limited = plan.limits.get(stabilized)
        if limited is None:
            hpa = plan.hpa
            desired, reason, message = apply_limits(
                current,
                stabilized,
                hpa.min_replicas,
                hpa.max_replicas,
                config.scale_up_limit_factor,
                config.scale_up_limit_minimum,
            )
            limited = plan.limits[stabilized] = (desired, (desired != stabilized, reason, message))
        if limited[0] != current:
            return None  # a rescale: the general path decides, writes and reports it
        able = READY_FOR_NEW_SCALE if stabilized == proposal else SCALE_DOWN_STABILIZED
        if facts.able != able or facts.limited != limited[1]:
            return None

        raw = _trunc_div(total_usage, plan.count)
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
            old = plan.hpa.status
            status = HPAStatus(current, current, old.conditions, old.last_scale_time, (metric,))
            self._statuses[plan.hpa.key] = (
                status,
                _Status(facts.able, facts.active_message, facts.limited, utilization, value, raw),
            )
        record(recommendations, Recommendation(proposal, now), stale)
        return _UNCHANGED if status is None else QuietSync(status)
