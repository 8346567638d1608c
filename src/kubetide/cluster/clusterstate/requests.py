"""Scale-up requests in flight and when they time out (CA spec §2.6).

A request remembers how many nodes were asked for and by when they must register
(``--max-node-provision-time``). A new positive delta restarts the clock; a negative one (instances
that failed) shrinks the request without restarting it. Each loop a request succeeds once the group's target has
no node left to start (registered less NotStarted), or times out: the group is backed off and the
request dropped, the target kept (CA 1.31; ``--revert-timed-out-scale-ups`` gives the increase back at
once, as 1.36 does).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from kubetide.cloud.instance import ErrorClass, InstanceErrorInfo
from kubetide.cluster.goformat import go_duration

__all__ = [
    "TIMEOUT_ERROR_CODES",
    "RequestOutcome",
    "ScaleDownRequest",
    "ScaleUpRequest",
    "progress_timeout_error",
    "register_scale_up",
    "request_outcome",
    "timeout_error",
    "timeout_event_message",
]

SCALE_DOWN_REQUEST_TTL_S = 300.0
# The error codes of a scale-up that timed out: upstream's and --scale-up-progress-timeout's.
TIMEOUT_ERROR_CODES = frozenset(
    {"timeout", "progressTimeout"}
)  # RegisterScaleDown's expected delete time: now + 5m


@dataclass(frozen=True, slots=True)
class ScaleUpRequest:
    group: str
    increase: int
    time: float
    expected_add_time: float


@dataclass(frozen=True, slots=True)
class ScaleDownRequest:
    group: str
    node: str
    time: float
    expected_delete_time: float


def register_scale_up(
    existing: ScaleUpRequest | None, group: str, delta: int, now: float, max_node_provision_time: float
) -> ScaleUpRequest | None:
    """The request after ``RegisterScaleUp(group, delta, now)``; None means "no request"."""
    if existing is None:
        if delta <= 0:
            return None
        return ScaleUpRequest(group, delta, now, now + max_node_provision_time)
    if existing.increase + delta <= 0:
        return None
    updated = replace(existing, increase=existing.increase + delta)
    if delta > 0:
        # Only new nodes restart the clock: shrinking a request must not extend its deadline.
        updated = replace(updated, time=now, expected_add_time=now + max_node_provision_time)
    return updated


class RequestOutcome(StrEnum):
    FULFILLED = "Fulfilled"
    TIMED_OUT = "TimedOut"
    PENDING = "Pending"


def request_outcome(request: ScaleUpRequest, upcoming: int, now: float) -> RequestOutcome:
    if upcoming <= 0:
        return RequestOutcome.FULFILLED
    if request.expected_add_time < now:
        return RequestOutcome.TIMED_OUT
    return RequestOutcome.PENDING


def timeout_error(request: ScaleUpRequest, now: float) -> InstanceErrorInfo:
    """The failure a timed-out request is recorded (and backed off) with.

    Upstream prints the time since the request was (re)started, not the provision limit: a request
    found 121s old with a 2m limit says "after 2m1s".
    """
    waited = go_duration(now - request.time)
    return InstanceErrorInfo(
        ErrorClass.Other, "timeout", f"Scale-up timed out for node group {request.group} after {waited}"
    )


def progress_timeout_error(request: ScaleUpRequest, now: float) -> InstanceErrorInfo:
    """kubetide's ``--scale-up-progress-timeout``: the group made no instance, as in a stockout."""
    waited = go_duration(now - request.time)
    return InstanceErrorInfo(
        ErrorClass.OutOfResources,
        "progressTimeout",
        f"Scale-up of node group {request.group} produced no new instance within {waited}",
    )


def timeout_event_message(request: ScaleUpRequest, now: float) -> str:
    """The ``ScaleUpTimedOut`` event text."""
    waited = go_duration(now - request.time)
    return f"Nodes added to group {request.group} failed to register within {waited}"
