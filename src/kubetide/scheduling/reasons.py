"""Why a pod does not fit: kube-scheduler's filter reason strings and the messages built from them.

Every filter failure carries the exact text kube-scheduler's plugin returns, so messages aggregate the
way upstream does: ``FitError.Error()`` counts each reason over all nodes and joins the sorted
``"<count> <reason>"`` strings (``0/5 nodes are available: 2 node(s) had untolerated taint
{dedicated: batch}, 3 Insufficient cpu.``); Cluster Autoscaler's ``NotTriggerScaleUp`` event counts
reasons over node groups the same way. A reason is *unresolvable* when removing pods cannot help
(``UnschedulableAndUnresolvable`` upstream); preemption reports those nodes as "Preemption is not
helpful for scheduling".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "FilterFailure",
    "Reason",
    "count_reasons",
    "format_reason_counts",
    "insufficient",
    "not_trigger_scale_up_message",
    "unschedulable_message",
    "untolerated_taint",
]


class Reason(StrEnum):
    """Fixed reason texts, worded as the kube-scheduler plugins word them."""

    TOO_MANY_PODS = "Too many pods"
    NODE_UNSCHEDULABLE = "node(s) were unschedulable"
    NODE_NAME = "node(s) didn't match the requested node name"
    NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
    HOST_PORTS = "node(s) didn't have free ports for the requested pod ports"
    POD_AFFINITY = "node(s) didn't match pod affinity rules"
    POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
    EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
    TOPOLOGY_SPREAD = "node(s) didn't match pod topology spread constraints"
    TOPOLOGY_SPREAD_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
    NODE_NOT_READY = "node(s) were not ready"
    PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
    NO_PREEMPTION_VICTIMS = "No preemption victims found for incoming pod"


def insufficient(resource: str) -> str:
    """NodeResourcesFit's text for one resource: ``Insufficient cpu``, ``Insufficient nvidia.com/gpu``."""
    return f"Insufficient {resource}"


def untolerated_taint(key: str, value: str) -> str:
    """TaintToleration's text, naming the first untolerated NoSchedule/NoExecute taint."""
    return f"node(s) had untolerated taint {{{key}: {value}}}"


@dataclass(frozen=True, slots=True)
class FilterFailure:
    """The first filter that rejected a pod on one node, with all of that filter's reasons.

    ``unresolvable`` mirrors ``UnschedulableAndUnresolvable``: evicting pods from the node would not help.
    """

    filter_name: str
    reasons: tuple[str, ...]
    unresolvable: bool = False


def count_reasons(failures: Iterable[FilterFailure | None]) -> Counter[str]:
    """Count each reason once per node that reported it (a node may report several)."""
    counts: Counter[str] = Counter()
    for failure in failures:
        if failure is not None:
            counts.update(failure.reasons)
    return counts


def format_reason_counts(counts: Mapping[str, int]) -> str:
    """``"2 node(s) had untolerated taint {a: b}, 3 Insufficient cpu"``: upstream sorts the formatted
    strings (``sort.Strings``), so ``"10 x"`` sorts before ``"3 y"``; we keep that quirk."""
    return ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items() if n > 0))


def unschedulable_message(
    num_nodes: int,
    counts: Mapping[str, int],
    preemption_counts: Mapping[str, int] | None = None,
) -> str:
    """The ``PodScheduled=False, reason=Unschedulable`` message of kube-scheduler's ``FitError``.

    ``preemption_counts`` is the per-node outcome of the default preemption plugin's dry run, rendered
    as its own ``FitError`` after ``preemption: `` (omitted when None).
    """
    msg = f"0/{num_nodes} nodes are available:"
    histogram = format_reason_counts(counts)
    if histogram:
        msg += f" {histogram}."
    if preemption_counts is not None:
        msg += f" preemption: {unschedulable_message(num_nodes, preemption_counts)}"
    return msg


def not_trigger_scale_up_message(reasons_per_group: Mapping[str, Iterable[str]]) -> str:
    """Cluster Autoscaler's ``NotTriggerScaleUp`` text: each reason counted once per node group.

    Upstream joins the counts in Go map order (unstable); we sort them so the text is reproducible.
    """
    counts: Counter[str] = Counter()
    for reasons in reasons_per_group.values():
        counts.update(set(reasons))
    return "pod didn't trigger scale-up: " + ", ".join(
        f"{n} {reason}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
