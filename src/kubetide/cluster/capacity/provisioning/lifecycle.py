"""What happens to ProvisioningRequests at the start of a loop and around the filter of schedulable pods,
as CA 1.36's ``processors/provreq`` decides it.

- :func:`refresh` (``provReqProcessor.Refresh``, a loop-start observer): a request Provisioned for more
  than 10 minutes gets ``BookingExpired`` (its capacity is no longer held), one not provisioned after 7
  days ``Failed`` (``Expired``), at most 20 of them a loop; a request Provisioned or Failed 7 days ago is
  deleted. kubetide also ends the requests CA documents but does not time out: a best-effort-atomic
  request with ``ValidUntilSeconds`` that passed unprovisioned is ``Failed`` (``ValidUntilSecondsExpired``).
- :func:`drop_consuming_pods` (``ProvisioningRequestPodsFilter``): pending pods that consume a request
  do not trigger a scale-up of their own (its capacity is theirs), with an event on each (at most 50).
- :func:`book_capacity` (``provReqProcessor.bookCapacity``): the pods of every Provisioned request whose
  booking holds are placed in the snapshot, so its capacity is neither given to other pods nor taken
  away by scale-down. Pods that already consume a request are not counted again: its booking is only
  the rest of its pods (CA books them all again, so a request's running pods counted twice for its 10
  minutes). A request whose capacity was revoked (``CapacityRevoked``, set by whoever revoked it: CA
  does not look) is not booked either. ``--provisioning-request-book-bound-pods`` restores CA's way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from kubetide.cluster.capacity.provisioning.requests import (
    RequestState,
    consumed_request,
    pods_for_request,
    supported_class,
)
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.capacity.provisioning import (
    ATOMIC_CLASS,
    BOOKING_EXPIRED,
    CAPACITY_REVOKED,
    FAILED,
    PROVISIONED,
)
from kubetide.model.pod import Pod
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = [
    "BOOKING_TIME_S",
    "EXPIRATION_TIME_S",
    "TERMINAL_TTL_S",
    "VALID_UNTIL_KEY",
    "book_capacity",
    "drop_consuming_pods",
    "refresh",
    "should_book",
]

BOOKING_TIME_S = 10 * 60.0  # defaultReservationTime
EXPIRATION_TIME_S = 7 * 24 * 3600.0  # defaultExpirationTime
TERMINAL_TTL_S = 7 * 24 * 3600.0  # defaultTerminalProvReqTTL
MAX_UPDATED = 20  # defaultMaxUpdated
MAX_EVENTS = 50  # maxProvReqEvent
VALID_UNTIL_KEY = "ValidUntilSeconds"


def should_book(state: RequestState, processor_instance: str, *, ca_booking: bool = False) -> bool:
    """``ShouldCapacityBeBooked``: Provisioned, and neither Failed nor BookingExpired (nor, kubetide,
    CapacityRevoked, unless ``ca_booking``: CA reads no CapacityRevoked there)."""
    if not supported_class(state.request, processor_instance):
        return False
    if state.is_true(FAILED) or state.is_true(BOOKING_EXPIRED):
        return False
    if state.is_true(CAPACITY_REVOKED) and not ca_booking:
        return False
    return state.is_true(PROVISIONED)


def _valid_until_passed(state: RequestState, now: float) -> bool:
    pr = state.request
    raw = pr.parameters.get(VALID_UNTIL_KEY)
    if pr.class_name != ATOMIC_CLASS or raw is None or pr.creation_time is None:
        return False
    try:
        seconds = int(raw)
    except ValueError:
        return False
    return now > pr.creation_time + seconds


def refresh(states: Sequence[RequestState], now: float, processor_instance: str) -> list[RequestState]:
    """Expire bookings and fail stale requests; returns the requests to delete (``DeleteOldProvReqs``)."""
    expired: list[RequestState] = []
    failed: list[RequestState] = []
    for state in states:
        if len(expired) >= MAX_UPDATED:
            break
        if not supported_class(state.request, processor_instance):
            continue
        if state.is_true(BOOKING_EXPIRED) or state.is_true(FAILED):
            continue
        provisioned = state.condition(PROVISIONED)
        if provisioned is not None and provisioned.status == "True":
            if provisioned.last_transition_time + BOOKING_TIME_S < now:
                expired.append(state)
        elif len(failed) < MAX_UPDATED - len(expired):
            created = state.request.creation_time or 0.0
            if created + EXPIRATION_TIME_S < now or _valid_until_passed(state, now):
                failed.append(state)
    for state in expired:
        state.set(
            BOOKING_EXPIRED,
            "True",
            "CapacityReservationTimeExpired",
            "Capacity reservation time is expired",
            now,
        )
    for state in failed:
        if (
            _valid_until_passed(state, now)
            and (state.request.creation_time or 0.0) + EXPIRATION_TIME_S >= now
        ):
            seconds = state.request.parameters[VALID_UNTIL_KEY]
            message = f"ProvisioningRequest was not provisioned within ValidUntilSeconds ({seconds}s)"
            state.set(FAILED, "True", "ValidUntilSecondsExpired", message, now)
        else:
            state.set(FAILED, "True", "Expired", "ProvisioningRequest is expired", now)
    old = []
    for state in states:
        provisioned, ended = state.condition(PROVISIONED), state.condition(FAILED)
        if (provisioned is not None and provisioned.last_transition_time + TERMINAL_TTL_S < now) or (
            ended is not None and ended.last_transition_time + TERMINAL_TTL_S < now
        ):
            old.append(state)
    return old


def drop_consuming_pods(pods: Sequence[Pod]) -> tuple[list[Pod], list[tuple[Pod, str]]]:
    """(the pods that do not consume a request, the first 50 that do with the request's name)."""
    kept: list[Pod] = []
    told: list[tuple[Pod, str]] = []
    for pod in pods:
        name = consumed_request(pod)
        if name is None:
            kept.append(pod)
        elif len(told) < MAX_EVENTS:
            told.append((pod, name))
    return kept, told


def book_capacity(
    states: Sequence[RequestState],
    templates: Mapping[str, PodTemplateView],
    consumers: Sequence[Pod],
    snapshot: ClusterSnapshot,
    simulator: HintingSimulator,
    now: float,
    processor_instance: str,
    *,
    ca_booking: bool = False,
) -> int:
    """Place the booked pods in ``snapshot``; returns how many were placed. ``consumers``: the cluster's
    pods bound to a node that consume a request (taken off its booking). ``ca_booking``
    (``--provisioning-request-book-bound-pods``): CA 1.36's ``bookCapacity``, every pod of the request,
    its bound pods too, whatever CapacityRevoked says."""
    used = Counter(
        (p.namespace, name) for p in consumers if not ca_booking and (name := consumed_request(p)) is not None
    )
    to_place: list[Pod] = []
    for state in states:
        if not should_book(state, processor_instance, ca_booking=ca_booking):
            continue
        try:
            pods = pods_for_request(state.request, templates)
        except ValueError as exc:
            state.set(FAILED, "True", "FailedToBookCapacity", f"Couldn't create pods, err: {exc}", now)
            continue
        taken = used.get((state.request.namespace, state.request.name), 0)
        booked = pods[taken:] if taken else pods
        to_place.extend(booked)
    if not to_place:
        return 0
    return len(simulator.try_schedule(snapshot, to_place))
