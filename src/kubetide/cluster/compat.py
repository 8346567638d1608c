"""Which Cluster Autoscaler release kubetide decides as: ``--ca-compatibility-version`` (kubetide's flag).

kubetide decides as CA 1.31 by default. Where a later release changed a decision or a flag's default,
``1.36`` selects the later behaviour, so a user comparing kubetide with either release (and the
conformance cases taken from newer upstream tests) sees that release's answers. Each behaviour is a
named field of :class:`Compatibility`, with the release that changed it; the defaults that changed are
:data:`FLAG_DEFAULTS` (a flag given explicitly is always honoured, whatever the version).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CA_VERSIONS",
    "DEFAULT_CA_VERSION",
    "DEFAULT_COMPATIBILITY",
    "FLAG_DEFAULTS",
    "Compatibility",
    "compatibility",
]

CA_VERSIONS = ("1.31", "1.36")
DEFAULT_CA_VERSION = "1.31"


@dataclass(frozen=True, slots=True)
class Compatibility:
    """The version-dependent decisions of one CA release."""

    version: str
    # 1.35+ eligibility.go isNodeAtOrBelowUtilizationThreshold: ``utilization > threshold`` blocks, so a
    # node exactly at the threshold is underutilized (1.31 isNodeBelowUtilizationThreshold: ``>=``).
    threshold_inclusive: bool
    # 1.32+ eligibility.go: a node whose utilization.Calculate fails is UnexpectedError (1.31 logs the
    # error and judges the zero utilization.Info, a candidate at any threshold above 0).
    unknown_utilization_unremovable: bool
    # 1.35+ unneeded/nodes.go: ``removalThreshold > 0 && !since.Add(threshold).Before(now)``, so a zero
    # unneeded (unready) time removes a node in the loop that first finds it unneeded (1.31: one loop
    # later, ``since + 0 < now`` is required even then).
    zero_removal_time_immediate: bool
    # 1.33+ static_autoscaler.go: with the ready nodes at --max-nodes-total the scale-up result is
    # LimitedByMaxNodesTotal, with a MaxNodesTotalReached event and NotTriggerScaleUp on the pods
    # (1.31: NoOptionsAvailable, no event).
    limited_by_max_nodes_total: bool
    # 1.36 resourcequotas (the quota tracker): a group skipped for a resource limit says
    # ``exceeded quota: "cluster-wide", resources: cpu, memory`` (1.31 skippedreasons.go
    # NewMaxResourceLimitReached: ``max cluster cpu, memory limit reached``, resources sorted).
    quota_skip_message: bool


_BY_VERSION = {
    "1.31": Compatibility(
        "1.31",
        threshold_inclusive=False,
        unknown_utilization_unremovable=False,
        zero_removal_time_immediate=False,
        limited_by_max_nodes_total=False,
        quota_skip_message=False,
    ),
    "1.36": Compatibility(
        "1.36",
        threshold_inclusive=True,
        unknown_utilization_unremovable=True,
        zero_removal_time_immediate=True,
        limited_by_max_nodes_total=True,
        quota_skip_message=True,
    ),
}

DEFAULT_COMPATIBILITY = _BY_VERSION[DEFAULT_CA_VERSION]

# The flags whose default depends on the release (CA's flag name -> value), durations in seconds.
FLAG_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "1.31": {
        "expander": "random",  # 1.33 made least-waste the default
        # 1.33's flag; 1.31 has none: a kube-system pod without a PDB always blocks (0: never drainable).
        "blocking-system-pod-distruption-timeout": 0.0,
        # kubetide's flag: 1.31 keeps a timed-out scale-up's target (fixNodeGroupSize lowers it later).
        "revert-timed-out-scale-ups": False,
        "cordon-node-before-terminating": False,  # 1.36: true
    },
    "1.36": {
        "expander": "least-waste",
        "blocking-system-pod-distruption-timeout": 3600.0,
        # 1.36 updateScaleRequests gives a timed-out scale-up's whole increase back at once.
        "revert-timed-out-scale-ups": True,
        "cordon-node-before-terminating": True,
    },
}


def compatibility(version: str) -> Compatibility:
    """The behaviours of ``version`` (one of :data:`CA_VERSIONS`; ValueError otherwise)."""
    try:
        return _BY_VERSION[version]
    except KeyError:
        raise ValueError(f"must be one of {', '.join(CA_VERSIONS)}, got {version!r}") from None
