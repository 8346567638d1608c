"""Normalization without ``spec.behavior``: downscale stabilization, then the min/max clamp with the
hard-coded scale-up cap ``max(factor x current, minimum)``."""

from __future__ import annotations

from kubetide.hpa.state import Recommendation


def stabilize_scale_down(
    recommendations: list[Recommendation], proposal: int, now: float, window: float
) -> int:
    """Highest recommendation no older than ``window`` (inclusive), and record ``proposal``.

    The new entry overwrites the *last* entry older than the window, else it is appended.
    """
    highest, stale = window_highest(recommendations, proposal, now - window)
    record(recommendations, Recommendation(proposal, now), stale)
    return highest


def window_highest(recommendations: list[Recommendation], proposal: int, cutoff: float) -> tuple[int, int]:
    """The highest count among the proposal and the entries no older than ``cutoff``, and the position
    of the last entry older than it (-1: none): ``stabilize_scale_down`` before it writes."""
    highest, stale = proposal, -1
    for i, rec in enumerate(recommendations):
        if rec.timestamp < cutoff:
            stale = i
        elif rec.replicas > highest:
            highest = rec.replicas
    return highest, stale


def record(recommendations: list[Recommendation], entry: Recommendation, stale: int) -> None:
    """Store ``entry`` over the stale position ``window_highest`` found, else append it."""
    if stale >= 0:
        recommendations[stale] = entry
    else:
        recommendations.append(entry)


def scale_up_limit(current: int, factor: float, minimum: float) -> int:
    return int(max(factor * float(current), minimum))


def apply_limits(
    current: int, desired: int, min_replicas: int, max_replicas: int, factor: float, minimum: float
) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithRules``: (replicas, ScalingLimited reason, message)."""
    limit = scale_up_limit(current, factor, minimum)
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
    if desired < min_replicas:
        return (
            min_replicas,
            "TooFewReplicas",
            "the desired replica count is less than the minimum replica count",
        )
    if desired > ceiling:
        return ceiling, reason, message
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
