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
    highest = proposal
    stale = -1
    cutoff = now - window
    for i, rec in enumerate(recommendations):
        if rec.timestamp < cutoff:
            stale = i
        elif rec.replicas > highest:
            highest = rec.replicas
    entry = Recommendation(proposal, now)
    if stale >= 0:
        recommendations[stale] = entry
    else:
        recommendations.append(entry)
    return highest


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
