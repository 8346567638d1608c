"""The two ProvisioningRequest classes' answers, as CA 1.36's provisioning classes give them.

:func:`check_capacity` (``checkcapacity/provisioningclass.go``): each request of the batch (one, unless
``--check-capacity-batch-processing`` with ``--check-capacity-provisioning-request-max-batch-size`` above
1) is Accepted, then all its pods are tried on the cluster as it is, in a fork of the snapshot: when
every pod fits they stay there for the next requests of the batch and the request is Provisioned
(``CapacityIsFound``); else Provisioned=False (``CapacityIsNotFound``, retried later), or Failed with
``noRetry: "true"``. The batch stops once ``--check-capacity-provisioning-request-batch-timebox`` has
passed. Nothing is scaled: the loop's result is Successful when some request fits, NoOptionsAvailable
otherwise.

:func:`atomic_pods_left` (``besteffortatomic``): the request's pods that do not fit the cluster as it is;
none left is Provisioned (``CapacityIsFound``) with no scale-up; the others go to the scale-up, all or
nothing, and :func:`atomic_outcome` sets Provisioned once it is known whether the groups were raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubetide.cluster.capacity.provisioning.requests import RequestState
from kubetide.cluster.reasons import ScaleUpResult
from kubetide.model.capacity.provisioning import ACCEPTED, FAILED, PROVISIONED
from kubetide.model.pod import Pod
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = [
    "CAPACITY_FOUND_MESSAGE",
    "NOT_FOUND_RETRY_MESSAGE",
    "NO_RETRY_KEY",
    "atomic_outcome",
    "atomic_pods_left",
    "check_capacity",
]

NO_RETRY_KEY = "noRetry"
CAPACITY_FOUND_MESSAGE = "Capacity is found in the cluster"
NOT_FOUND_RETRY_MESSAGE = "Capacity is not found, CA will try to find it later."
ACCEPTED_MESSAGE = "ProvisioningRequest is accepted by ClusterAutoscaler"
# combinedStatusSet.Add: the batch's result is the "best" of its requests'.
_RANK = {
    ScaleUpResult.NOT_TRIED: 0,
    ScaleUpResult.NO_OPTIONS_AVAILABLE: 1,
    ScaleUpResult.ERROR: 2,
    ScaleUpResult.SUCCESSFUL: 3,
}


def check_capacity(
    batch: Sequence[tuple[RequestState, Sequence[Pod]]],
    snapshot: ClusterSnapshot,
    simulator: HintingSimulator,
    now: float,
    *,
    batched: bool,
    timebox: float,
    elapsed: Callable[[], float],
) -> ScaleUpResult:
    """Answer each request of ``batch`` (in a fork of ``snapshot``, reverted before returning)."""
    if not batch:
        return ScaleUpResult.NOT_TRIED
    result = ScaleUpResult.NOT_TRIED
    snapshot.fork()
    try:
        for done, (state, pods) in enumerate(batch, start=1):
            # Provision marks every request of the batch Accepted, but updateRequests writes only those
            # checked before the timebox ran out: the same as marking each as it is checked.
            state.set(ACCEPTED, "True", "Accepted", ACCEPTED_MESSAGE, now)
            found = _check_one(state, pods, snapshot, simulator, now)
            if _RANK[found] > _RANK[result]:
                result = found
            # checkCapacityBatch: time.Since(start) > timebox; a 0 timebox stops after the first.
            if batched and done < len(batch) and (timebox <= 0 or elapsed() > timebox):
                break
    finally:
        snapshot.revert()
    return result


def _check_one(
    state: RequestState,
    pods: Sequence[Pod],
    snapshot: ClusterSnapshot,
    simulator: HintingSimulator,
    now: float,
) -> ScaleUpResult:
    snapshot.fork()
    placed = simulator.try_schedule(snapshot, pods)
    if len(placed) == len(pods):
        snapshot.commit()
        state.set(PROVISIONED, "True", "CapacityIsFound", CAPACITY_FOUND_MESSAGE, now)
        return ScaleUpResult.SUCCESSFUL
    snapshot.revert()
    if state.request.parameters.get(NO_RETRY_KEY) == "true":
        state.set(FAILED, "True", "CapacityIsNotFound", "CA could not find requested capacity", now)
    else:
        state.set(PROVISIONED, "False", "CapacityIsNotFound", NOT_FOUND_RETRY_MESSAGE, now)
    return ScaleUpResult.NO_OPTIONS_AVAILABLE


def atomic_pods_left(
    state: RequestState,
    pods: Sequence[Pod],
    snapshot: ClusterSnapshot,
    simulator: HintingSimulator,
    now: float,
) -> list[Pod]:
    """The pods that do not fit the cluster as it is (tried in a fork, reverted); when all fit, the
    request is Provisioned at once."""
    snapshot.fork()
    try:
        placed = {id(p) for p in simulator.try_schedule(snapshot, pods)}
    finally:
        snapshot.revert()
    left = [p for p in pods if id(p) not in placed]
    if not left:
        state.set(PROVISIONED, "True", "CapacityIsFound", CAPACITY_FOUND_MESSAGE, now)
    return left


def atomic_outcome(state: RequestState, scaled: bool, now: float, how: str = "") -> None:
    """Provisioned once the all-or-nothing scale-up is known: the groups raised (``CapacityIsProvisioned``),
    or not (retried later). ``how``: kubetide's note of how the increase was made all-or-nothing."""
    if scaled:
        message = CAPACITY_FOUND_MESSAGE + (f"; {how}" if how else "")
        state.set(PROVISIONED, "True", "CapacityIsProvisioned", message, now)
    else:
        state.set(PROVISIONED, "False", "CapacityIsNotFound", NOT_FOUND_RETRY_MESSAGE, now)
