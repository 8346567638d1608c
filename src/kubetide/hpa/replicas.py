"""The replica calculator: from samples, pods and a target to a proposed replica count for one metric.

Mirrors ``replica_calculator.go``: usage is averaged over ready pods with samples; when pods are
missing samples or unready during a scale-up, the ratio is recomputed with conservative fill-ins
(missing pods "at target" on scale-down, zero on scale-up) and two guards keep the current count if
the fill-ins flip the direction. Integer truncation and float64 ratios are as upstream.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import attrgetter

from kubetide.hpa.podgroups import PodGroups
from kubetide.hpa.ports import PodMetric
from kubetide.hpa.tolerances import Tolerances

__all__ = [
    "Calculation",
    "CalculationError",
    "fdiv",
    "int32_ceil",
    "plain_metric_replicas",
    "utilization_replicas",
]

MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
MAX_INT64 = 2**63 - 1


class CalculationError(Exception):
    """The numbers can't produce a proposal (no samples left, no matching requests)."""


@dataclass(frozen=True, slots=True)
class Calculation:
    """How one metric's proposal came about; ``explain`` prints it."""

    replicas: int
    ratio: float
    outcome: str  # within-tolerance | scaled | rebalanced | direction-flipped | against-ratio | from-zero
    ready_count: int = 0
    unready: int = 0
    missing: int = 0
    ignored: int = 0
    new_ratio: float | None = None
    samples: int = 0


def fdiv(a: float, b: float) -> float:
    """float64 division as Go does it: x/0 is ±Inf, 0/0 is NaN."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def int32_ceil(x: float) -> int:
    """``int32(math.Ceil(x))`` saturated at the int32 bounds (NaN counts as the lower bound)."""
    if math.isnan(x):
        return MIN_INT32
    if x >= MAX_INT32:
        return MAX_INT32
    if x <= MIN_INT32:
        return MIN_INT32
    return math.ceil(x)


def int64(x: int) -> int:
    """Wrap to int64: upstream sums samples and requests in Go's int64 (overflow wraps around)."""
    return ((x + 2**63) & 0xFFFF_FFFF_FFFF_FFFF) - 2**63


def int32(x: int) -> int:
    """Wrap to int32, as Go's ``int32(v)`` conversion of an integer does."""
    return ((x + 2**31) & 0xFFFF_FFFF) - 2**31


def _percent(total_usage: int, total_request: int) -> int:
    """``int32((metricsTotal * 100) / requestsTotal)``: int64 arithmetic, then truncated to int32, so
    a utilization beyond 2^31-1 percent wraps negative exactly as upstream's does."""
    scaled = total_usage * 100
    if 0 <= scaled <= MAX_INT64 and total_request > 0:  # nothing to wrap or negate (the usual case)
        q = scaled // total_request
        return q if q <= MAX_INT32 else int32(q)
    return int32(_trunc_div(int64(scaled), total_request))


def _trunc_div(a: int, b: int) -> int:
    if a >= 0 and b > 0:
        return a // b
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_value = attrgetter("value")
_NONE: frozenset[str] = frozenset()


def _samples(metrics: Mapping[str, PodMetric], groups: PodGroups) -> dict[str, int]:
    samples = dict(zip(metrics.keys(), map(_value, metrics.values()), strict=True))
    for name in groups.ignored & samples.keys():
        del samples[name]
    for name in groups.unready & samples.keys():
        del samples[name]
    return samples


def _utilization(
    samples: Mapping[str, int], requests: Mapping[str, int], target: int
) -> tuple[float, int, int]:
    if samples.keys() <= requests.keys():
        total_usage = int64(sum(samples.values()))
        total_request = int64(sum(map(requests.__getitem__, samples)))
        n = len(samples)
    else:
        total_usage = total_request = n = 0
        for name, value in samples.items():
            request = requests.get(name)
            if request is None:
                continue  # a sample for a pod we don't know: extraneous
            total_usage += value
            total_request += request
            n += 1
        total_usage, total_request = int64(total_usage), int64(total_request)
    if total_request == 0:
        raise CalculationError("no metrics returned matched known pods")
    utilization = _percent(total_usage, total_request)
    return fdiv(float(utilization), float(target)), utilization, _trunc_div(total_usage, n)


def utilization_replicas(
    current: int,
    target_utilization: int,
    metrics: Mapping[str, PodMetric],
    requests: Mapping[str, int],
    groups: PodGroups,
    tolerances: Tolerances,
    request_total: int | None = None,
) -> tuple[Calculation, int, int]:
    """``GetResourceReplicas``: returns the calculation, utilization % and raw average (first pass).

    ``request_total``, when the caller knows it, is the requests' sum over exactly the sampled pods
    (``groups.exact``); it saves summing the requests again.
    """
    excluded = (
        (groups.ignored | groups.unready) & metrics.keys() if groups.ignored or groups.unready else _NONE
    )
    samples: dict[str, int] | None = None
    if metrics and (
        (groups.exact and request_total is not None) or (not excluded and metrics.keys() <= requests.keys())
    ):
        # Common case: every sample counts, so sum straight from the samples without copying them.
        total_usage = int64(sum(map(_value, metrics.values())))
        if groups.exact and request_total is not None:
            total_request = int64(request_total)
        else:
            total_request = int64(sum(map(requests.__getitem__, metrics)))
        if total_request == 0:
            raise CalculationError("no metrics returned matched known pods")
        utilization = _percent(total_usage, total_request)
        ratio = fdiv(float(utilization), float(target_utilization))
        raw = _trunc_div(total_usage, len(metrics))
    else:
        samples = _samples(metrics, groups)
        if not samples:
            raise CalculationError("did not receive metrics for targeted pods (pods might be unready)")
        ratio, utilization, raw = _utilization(samples, requests, target_utilization)

    def missing_usage(name: str) -> int:
        # Scale-down: missing pods count as using 100 % of their request, or the target if higher.
        return _trunc_div(int64(requests[name] * max(100, target_utilization)), 100)

    def new_ratio(filled: Mapping[str, int]) -> float:
        return _utilization(filled, requests, target_utilization)[0]

    calc = _decide(
        current,
        ratio,
        groups,
        tolerances,
        len(metrics) - len(excluded),
        lambda: samples if samples is not None else _samples(metrics, groups),
        missing_usage,
        new_ratio,
    )
    return calc, utilization, raw


def plain_metric_replicas(
    current: int,
    target: int,
    metrics: Mapping[str, PodMetric],
    groups: PodGroups,
    tolerances: Tolerances,
) -> tuple[Calculation, int]:
    """``calcPlainMetricReplicas`` (Pods metrics, resource AverageValue): calculation and average usage."""
    samples = _samples(metrics, groups)
    if not samples:
        raise CalculationError("did not receive metrics for targeted pods (pods might be unready)")
    ratio, usage = _usage_ratio(samples, target)
    calc = _decide(
        current,
        ratio,
        groups,
        tolerances,
        len(samples),
        lambda: samples,
        lambda _name: target,  # scale-down: missing pods are exactly at target
        lambda filled: _usage_ratio(filled, target)[0],
    )
    return calc, usage


def _decide(
    current: int,
    ratio: float,
    groups: PodGroups,
    tolerances: Tolerances,
    sample_count: int,
    samples: Callable[[], dict[str, int]],
    missing_usage: Callable[[str], int],
    recompute: Callable[[Mapping[str, int]], float],
) -> Calculation:
    """The part both calculators share: keep the count within tolerance or scale by the ready pods;
    with missing or (on scale-up) unready pods, fill them in conservatively and recompute, keeping the
    current count if the fill-ins flip the direction or the proposal moves against the ratio."""

    def calc(replicas: int, outcome: str, new_ratio: float | None = None) -> Calculation:
        return Calculation(
            replicas,
            ratio,
            outcome,
            groups.ready_count,
            len(groups.unready),
            len(groups.missing),
            len(groups.ignored),
            new_ratio,
            sample_count,
        )

    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if tolerances.within(ratio):
            return calc(current, "within-tolerance")
        return calc(int32_ceil(ratio * groups.ready_count), "scaled")
    filled = samples()
    if groups.missing:
        if ratio < 1.0:
            for name in groups.missing:
                filled[name] = missing_usage(name)
        elif ratio > 1.0:  # at exactly 1 missing pods are left out, as upstream
            for name in groups.missing:
                filled[name] = 0
    if scale_up_with_unready:
        for name in groups.unready:
            filled[name] = 0
    new_ratio = recompute(filled)
    return calc(*_rebalanced(current, ratio, new_ratio, len(filled), tolerances), new_ratio)


def _rebalanced(
    current: int, ratio: float, new_ratio: float, count: int, tolerances: Tolerances
) -> tuple[int, str]:
    if tolerances.within(new_ratio):
        return current, "within-tolerance"
    if (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current, "direction-flipped"
    proposal = int32_ceil(new_ratio * count)
    if (new_ratio < 1.0 and proposal > current) or (new_ratio > 1.0 and proposal < current):
        return current, "against-ratio"
    return proposal, "rebalanced"


def _usage_ratio(samples: Mapping[str, int], target: int) -> tuple[float, int]:
    usage = _trunc_div(int64(sum(samples.values())), len(samples))
    return fdiv(float(usage), float(target)), usage


def usage_ratio_replicas(current: int, ratio: float, ready_pods: int, tolerances: Tolerances) -> Calculation:
    """``getUsageRatioReplicaCount`` for Object/External Value targets; from zero: ``ceil(ratio)``."""
    if current == 0:
        return Calculation(int32_ceil(ratio), ratio, "from-zero")
    if tolerances.within(ratio):
        return Calculation(current, ratio, "within-tolerance", ready_count=ready_pods)
    return Calculation(int32_ceil(ratio * ready_pods), ratio, "scaled", ready_count=ready_pods)


def per_pod_replicas(
    status_replicas: int, total: int, target: int, tolerances: Tolerances
) -> tuple[Calculation, int]:
    """Object/External AverageValue: ``ceil(total/target)`` outside tolerance; and the per-pod value."""
    ratio = fdiv(float(total), float(target) * float(status_replicas))
    if tolerances.within(ratio):
        calc = Calculation(status_replicas, ratio, "within-tolerance")
    else:
        calc = Calculation(int32_ceil(fdiv(float(total), float(target))), ratio, "scaled")
    if float(total) >= float(MAX_INT64):
        per_pod = MAX_INT64
    elif status_replicas == 0:
        per_pod = 0
    else:
        per_pod = math.ceil(float(total) / float(status_replicas))
    return calc, per_pod


def saturating_sum(values: list[int] | tuple[int, ...]) -> int:
    """Sum of external samples, capped at 2^63-1 as upstream guards int64 overflow."""
    total = 0
    for v in values:
        if v > 0 and total > MAX_INT64 - v:
            return MAX_INT64
        total += v
    return total
