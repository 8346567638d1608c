"""How long a drain waits and what it evicts: CA 1.31's evictor (``core/scaledown/actuation/drain.go``)
as settings, clocks and the state one drain keeps between the rounds that drive it.

Upstream drains a node in a goroutine that sleeps between steps; kubetide runs the same steps in rounds
(the loop, and the deletion wake-ups between loops), so the goroutine's locals live in a
:class:`DrainState` and its sleeps become times at which the next round is due:

* evictions (``initiateEviction`` / ``evictPod``): every pod to move is evicted once, with
  ``DeleteOptions.gracePeriodSeconds`` = its ``terminationGracePeriodSeconds`` (30 s when unset) capped
  by ``--max-graceful-termination-sec`` when that is above 0 (:func:`eviction_grace`). A refused eviction
  is retried every :data:`EVICTION_RETRY_S` from the drain's start while the retry time is before the
  start plus ``--max-pod-eviction-time``; at the first retry time past it the drain fails;
* the wait (``waitPodsToDisappear``): once every eviction is accepted, the evicted pods are looked for
  every :data:`WAIT_POLL_S`, starting at once, while less than ``--max-graceful-termination-sec`` +
  :data:`POD_EVICTION_HEADROOM_S` has passed; the node is deleted at the first look that finds none of
  them left on it, and the drain fails at the first poll time past that limit.

Expendable pods (priority below ``--expendable-pods-priority-cutoff``) are left out of the drain, as
upstream's actuator leaves them out of its snapshot (``createSnapshot``): never evicted nor waited for,
they go with the node.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.pod import Pod

__all__ = [
    "DEFAULT_TERMINATION_GRACE_S",
    "EVICTION_RETRY_S",
    "POD_EVICTION_HEADROOM_S",
    "WAIT_POLL_S",
    "DrainSettings",
    "DrainState",
    "eviction_grace",
    "non_expendable",
    "ticks_since",
]

EVICTION_RETRY_S = 10.0  # drain.go DefaultEvictionRetryTime
POD_EVICTION_HEADROOM_S = 30.0  # drain.go DefaultPodEvictionHeadroom: for pods that ignore SIGTERM
WAIT_POLL_S = 5.0  # waitPodsToDisappear's sleep between looks
DEFAULT_TERMINATION_GRACE_S = 30  # apiv1.DefaultTerminationGracePeriodSeconds
_EPSILON = 1e-6  # a round woken at a due time computed by multiplication counts as that time


@dataclass(frozen=True, slots=True)
class DrainSettings:
    """The flags a drain reads."""

    max_pod_eviction_time: float = 120.0
    max_graceful_termination_sec: int = 600
    delay_after_taint: float = 0.0
    expendable_cutoff: int = -10

    @classmethod
    def from_options(cls, options: AutoscalingOptions) -> DrainSettings:
        return cls(
            max_pod_eviction_time=options.max_pod_eviction_time,
            max_graceful_termination_sec=options.max_graceful_termination_sec,
            delay_after_taint=options.node_delete_delay_after_taint,
            expendable_cutoff=options.expendable_pods_priority_cutoff,
        )

    @property
    def wait_limit(self) -> float:
        """``waitPodsToDisappear``'s bound: ``maxTermination`` seconds plus the headroom."""
        return max(self.max_graceful_termination_sec, 0) + POD_EVICTION_HEADROOM_S


@dataclass(slots=True)
class DrainState:
    """What one drain of one node has done so far, in this process. A restarted CA starts a new drain
    of a node it finds tainted (the pods it evicted before are evicted once more, and waited for)."""

    evicted: dict[str, int] = field(default_factory=dict)  # pod key -> the grace period it was given
    tried: set[str] = field(default_factory=set)  # pods whose eviction was asked (announced) at least once
    eviction_tick: int = -1  # the last retry time (ticks of EVICTION_RETRY_S from the start) acted on
    wait_from: float | None = None  # when every eviction had been accepted: the wait's start
    poll_tick: int = -1  # the last look (ticks of WAIT_POLL_S from wait_from) made


def ticks_since(start: float, period: float, now: float) -> int:
    """The index of the last time ``start + k * period`` at or before ``now`` (-1 before ``start``)."""
    return math.floor((now - start) / period + _EPSILON)


def eviction_grace(pod: Pod, max_graceful_termination_sec: int) -> int:
    """``evictPod``'s grace period: the pod's own (30 s unset), capped by the flag when it is above 0."""
    grace = pod.termination_grace_s
    termination = DEFAULT_TERMINATION_GRACE_S if grace is None else int(grace)
    if max_graceful_termination_sec > 0 and termination > max_graceful_termination_sec:
        termination = max_graceful_termination_sec
    return termination


def non_expendable(pods: Sequence[Pod], cutoff: int) -> Sequence[Pod]:
    """``FilterOutExpendablePods``: the pods at or above the cutoff (the same sequence when all are)."""
    if all(p.priority >= cutoff for p in pods):
        return pods
    return [p for p in pods if p.priority >= cutoff]
