"""How long a drain waits and what it evicts: CA 1.31's evictor (``core/scaledown/actuation/drain.go``)
as settings, clocks and the state one drain keeps between the rounds that drive it.

Upstream drains a node in a goroutine that sleeps between steps; kubetide runs the same steps in rounds
(the loop, and the deletion wake-ups between loops), so the goroutine's locals live in a
:class:`DrainState` and its sleeps become times at which the next round is due:

* the drain's start: the first round past ``--node-delete-delay-after-taint`` (the taint time plus the
  delay, when upstream's goroutine wakes up and ``initiateEviction`` sets ``retryUntil``); a drain
  resumed by a restarted process starts at that process's first round;
* evictions (``initiateEviction`` / ``evictPod``): every pod to move is evicted once, with
  ``DeleteOptions.gracePeriodSeconds`` = its ``terminationGracePeriodSeconds`` (30 s when unset) capped
  by ``--max-graceful-termination-sec`` when that is above 0 (:func:`eviction_grace`). The first attempt
  is at the start; a refused eviction is retried every :data:`EVICTION_RETRY_S` while the retry time is
  before the start plus ``--max-pod-eviction-time`` (``time.Now().Before(retryUntil)``), and no attempt
  is made at or after that deadline: at the first retry time past it the drain fails;
* DaemonSet pods (``podsToEvict`` / ``daemonset.PodsToEvict``): with ``--daemonset-eviction-for-occupied-nodes``
  (drained nodes, default true) or ``--daemonset-eviction-for-empty-nodes`` (empty nodes, default
  false), or the pod's ``cluster-autoscaler.kubernetes.io/enable-ds-eviction`` annotation ("true"
  evicts, any other value never), the DaemonSet pods the node has when its drain starts are evicted
  best-effort: retried like the others until the deadline, then given up with no error, no event and
  no count; never waited for. The wait for the other pods starts once these evictions are over too
  (``initiateEviction`` collects every eviction's answer);
* the wait (``waitPodsToDisappear``): once every eviction is over, the evicted pods are looked for
  every :data:`WAIT_POLL_S`, starting at once, while less than ``--max-graceful-termination-sec`` +
  :data:`POD_EVICTION_HEADROOM_S` has passed; the node may go at the first look that finds none of
  them left on it, and the drain fails at the first poll time past that limit.

Expendable pods (priority below ``--expendable-pods-priority-cutoff``) are left out of the drain, as
upstream's actuator leaves them out of its snapshot (``createSnapshot``): never evicted nor waited for,
they go with the node.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.pod import Pod
from kubetide.scheduling.utilization import is_daemonset_pod, is_mirror_pod

__all__ = [
    "DEFAULT_TERMINATION_GRACE_S",
    "ENABLE_DS_EVICTION_ANNOTATION",
    "EVICTION_RETRY_S",
    "POD_EVICTION_HEADROOM_S",
    "WAIT_POLL_S",
    "DrainSettings",
    "DrainState",
    "daemonset_pods_to_evict",
    "eviction_grace",
    "non_expendable",
    "ticks_since",
]

EVICTION_RETRY_S = 10.0  # drain.go DefaultEvictionRetryTime
POD_EVICTION_HEADROOM_S = 30.0  # drain.go DefaultPodEvictionHeadroom: for pods that ignore SIGTERM
WAIT_POLL_S = 5.0  # waitPodsToDisappear's sleep between looks
DEFAULT_TERMINATION_GRACE_S = 30  # apiv1.DefaultTerminationGracePeriodSeconds
ENABLE_DS_EVICTION_ANNOTATION = "cluster-autoscaler.kubernetes.io/enable-ds-eviction"  # utils/daemonset
_EPSILON = 1e-6  # a round woken at a due time computed by multiplication counts as that time


@dataclass(frozen=True, slots=True)
class DrainSettings:
    """The flags a drain reads."""

    max_pod_eviction_time: float = 120.0
    max_graceful_termination_sec: int = 600
    delay_after_taint: float = 0.0
    expendable_cutoff: int = -10
    daemonset_eviction_for_occupied_nodes: bool = True
    daemonset_eviction_for_empty_nodes: bool = False
    cordon: bool = False  # --cordon-node-before-terminating: uncordon a node whose deletion failed

    @classmethod
    def from_options(cls, options: AutoscalingOptions) -> DrainSettings:
        return cls(
            max_pod_eviction_time=options.max_pod_eviction_time,
            max_graceful_termination_sec=options.max_graceful_termination_sec,
            delay_after_taint=options.node_delete_delay_after_taint,
            expendable_cutoff=options.expendable_pods_priority_cutoff,
            daemonset_eviction_for_occupied_nodes=options.daemonset_eviction_for_occupied_nodes,
            daemonset_eviction_for_empty_nodes=options.daemonset_eviction_for_empty_nodes,
            cordon=options.cordon_node_before_terminating,
        )

    def in_time(self, tick: int) -> bool:
        """``evictPod``: an attempt at retry time ``tick`` (ticks of :data:`EVICTION_RETRY_S` from the
        drain's start): the first always (``first ||``), later ones while before the deadline."""
        return tick == 0 or tick * EVICTION_RETRY_S < self.max_pod_eviction_time

    @property
    def wait_limit(self) -> float:
        """``waitPodsToDisappear``'s bound: ``maxTermination`` seconds plus the headroom."""
        return max(self.max_graceful_termination_sec, 0) + POD_EVICTION_HEADROOM_S


@dataclass(frozen=True, slots=True)
class DrainState:
    """What one drain of one node has done so far, in this process (each step makes a new one). A
    restarted CA starts a new drain of a node it finds tainted (the pods it evicted before are evicted
    once more, and waited for)."""

    started: float  # the drain's start: its eviction clock (retryUntil) counts from here
    evicted: Mapping[str, int] = field(default_factory=dict)  # pod key -> the grace period it was given
    tried: frozenset[str] = frozenset()  # pods whose eviction was asked (announced) at least once
    eviction_tick: int = -1  # the last retry time (ticks of EVICTION_RETRY_S from the start) acted on
    # The DaemonSet pods evicted best-effort (chosen when the drain starts), and those whose eviction is
    # over (accepted, gone, or given up at the deadline).
    best_effort: tuple[str, ...] | None = None
    best_effort_over: frozenset[str] = frozenset()
    wait_from: float | None = None  # when every eviction was over: the wait's start
    poll_tick: int = -1  # the last look (ticks of WAIT_POLL_S from wait_from) made
    ready: bool = False  # the evicted pods are gone: the node waits for the rest of its atomic group


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


def daemonset_pods_to_evict(pods: Sequence[Pod], evict_by_default: bool) -> list[Pod]:
    """``daemonset.PodsToEvict`` over the node's DaemonSet pods (mirror pods never): the pods annotated
    ``enable-ds-eviction: "true"``, and with ``evict_by_default`` those without the annotation."""
    out = []
    for p in pods:
        if p.phase in ("Succeeded", "Failed") or is_mirror_pod(p) or not is_daemonset_pod(p):
            continue
        wanted = p.annotations.get(ENABLE_DS_EVICTION_ANNOTATION)
        if wanted == "true" or (wanted is None and evict_by_default):
            out.append(p)
    return out


def non_expendable(pods: Sequence[Pod], cutoff: int) -> Sequence[Pod]:
    """``FilterOutExpendablePods``: the pods at or above the cutoff (the same sequence when all are)."""
    if all(p.priority >= cutoff for p in pods):
        return pods
    return [p for p in pods if p.priority >= cutoff]
