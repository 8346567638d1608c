"""Normalization with ``spec.behavior``: stabilization windows in both directions, then rate-limit
policies over their periods, and the scale-event bookkeeping those policies read."""

from __future__ import annotations

import math

from kubetide.hpa.state import Recommendation, ScaleEvent
from kubetide.model.hpa import ScalingRules

MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)


def stabilize(
    recommendations: list[Recommendation],
    current: int,
    proposal: int,
    now: float,
    up_window: float,
    down_window: float,
) -> tuple[int, str, str]:
    """``stabilizeRecommendationWithBehaviors``: move only as far as every recent recommendation agrees.

    Windows are strict (age < window). The raw proposal is stored over the last entry older than
    both windows, else appended. Returns (stabilized, reason-if-changed, message-if-changed).
    """
    up = down = proposal
    up_cutoff, down_cutoff = now - up_window, now - down_window
    stale = -1
    for i, rec in enumerate(recommendations):
        if rec.timestamp > up_cutoff:
            up = min(rec.replicas, up)
        if rec.timestamp > down_cutoff:
            down = max(rec.replicas, down)
        if rec.timestamp < up_cutoff and rec.timestamp < down_cutoff:
            stale = i
    stabilized = current
    if stabilized < up:
        stabilized = up
    if stabilized > down:
        stabilized = down
    entry = Recommendation(proposal, now)
    if stale >= 0:
        recommendations[stale] = entry
    else:
        recommendations.append(entry)
    if proposal >= current:
        return (
            stabilized,
            "ScaleUpStabilized",
            ("recent recommendations were lower than current one, applying the lowest recent recommendation"),
        )
    return (
        stabilized,
        "ScaleDownStabilized",
        ("recent recommendations were higher than current one, applying the highest recent recommendation"),
    )


def int32(x: int) -> int:
    """Wrap to int32 as Go's int32 arithmetic does: upstream adds replica counts and policy values in
    int32, so e.g. a ``Pods`` policy of 2^31-1 overflows to a negative limit (and blocks scale-up)."""
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def replicas_change_in_period(events: list[ScaleEvent], period: float, now: float) -> int:
    """Sum of changes strictly younger than ``period`` seconds (an int32 sum)."""
    cutoff = now - period
    return int32(sum(e.replica_change for e in events if e.timestamp > cutoff))


def _period_start(
    current: int, up_events: list[ScaleEvent], down_events: list[ScaleEvent], period: int, now: float
) -> int:
    added = replicas_change_in_period(up_events, period, now)
    removed = replicas_change_in_period(down_events, period, now)
    return int32(int32(current - added) + removed)


def scale_up_limit(
    current: int, up_events: list[ScaleEvent], down_events: list[ScaleEvent], rules: ScalingRules, now: float
) -> int:
    """``calculateScaleUpLimitWithScalingRules``: Max picks the largest policy result, Min the smallest."""
    if rules.select_policy == "Disabled":
        return current
    pick_min = rules.select_policy == "Min"
    result = MAX_INT32 if pick_min else MIN_INT32
    for p in rules.policies or ():
        start = _period_start(current, up_events, down_events, p.period_seconds, now)
        if p.type == "Pods":
            proposed = int32(start + p.value)
        else:
            proposed = math.ceil(float(start) * (1 + float(p.value) / 100))
        result = min(result, proposed) if pick_min else max(result, proposed)
    return result


def scale_down_limit(
    current: int, up_events: list[ScaleEvent], down_events: list[ScaleEvent], rules: ScalingRules, now: float
) -> int:
    """``calculateScaleDownLimitWithBehaviors``: Max allows the biggest drop (smallest result)."""
    if rules.select_policy == "Disabled":
        return current
    pick_max = rules.select_policy == "Min"
    result = MIN_INT32 if pick_max else MAX_INT32
    for p in rules.policies or ():
        start = _period_start(current, up_events, down_events, p.period_seconds, now)
        if p.type == "Pods":
            proposed = int32(start - p.value)
        else:
            proposed = int(float(start) * (1 - float(p.value) / 100))  # truncation toward zero
        result = max(result, proposed) if pick_max else min(result, proposed)
    return result


def apply_rate_limits(
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    up_rules: ScalingRules,
    down_rules: ScalingRules,
    up_events: list[ScaleEvent],
    down_events: list[ScaleEvent],
    now: float,
) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithBehaviorRate``: clamp in the direction of travel only."""
    if desired > current:
        limit = max(scale_up_limit(current, up_events, down_events, up_rules, now), current)
        if max_replicas > limit:
            ceiling, reason, message = (
                limit,
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate",
            )
        else:
            ceiling, reason, message = (
                max_replicas,
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
            )
        if desired > ceiling:
            return ceiling, reason, message
    elif desired < current:
        limit = min(scale_down_limit(current, up_events, down_events, down_rules, now), current)
        if min_replicas < limit:
            floor, reason, message = (
                limit,
                "ScaleDownLimit",
                "the desired replica count is decreasing faster than the maximum scale rate",
            )
        else:
            floor, reason, message = (
                min_replicas,
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count",
            )
        if desired < floor:
            return floor, reason, message
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"


def longest_period(rules: ScalingRules) -> int:
    return max((p.period_seconds for p in rules.policies or ()), default=0)


def store_scale_event(events: list[ScaleEvent], rules: ScalingRules, change: int, now: float) -> None:
    """``storeScaleEvent`` for one direction: mark events older than the longest policy period as
    outdated, then overwrite the last outdated one with the new event, or append."""
    cutoff = now - longest_period(rules)
    last_outdated = -1
    for i, e in enumerate(events):
        if e.timestamp < cutoff:
            e.outdated = True
        if e.outdated:
            last_outdated = i
    entry = ScaleEvent(change, now)
    if last_outdated >= 0:
        events[last_outdated] = entry
    else:
        events.append(entry)
