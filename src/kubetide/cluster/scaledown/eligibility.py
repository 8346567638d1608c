"""Which nodes may be considered for scale-down at all (``FilterOutUnremovable``, CA spec §7.3).

An ordered tuple of small rules, first match wins, each returning an unremovable reason: cheap,
side-effect-free checks first, then utilization (computed once), then the thresholds. A node that
passes is a candidate for the removal simulation; its utilization is returned for the status and
for ``explain``. At or below the threshold passes: only ``utilization > threshold`` blocks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from kubetide.cloud.instance import NodeGroupAutoscalingOptions
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.reasons import UnremovableReason
from kubetide.cluster.scaledown.taints import is_being_deleted
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.utilization import Utilization, UtilizationMemo, node_utilization

__all__ = [
    "SCALE_DOWN_DISABLED_ANNOTATION",
    "EligibilityInput",
    "EligibilityMemo",
    "EligibilityResult",
    "filter_out_unremovable",
]

SCALE_DOWN_DISABLED_ANNOTATION = "cluster-autoscaler.kubernetes.io/scale-down-disabled"


@dataclass(frozen=True, slots=True)
class EligibilityInput:
    """The loop's view: pods per node (None: the node is not in the snapshot), group per node, and
    each group's options; ``recently_unremovable`` maps node names to when their recheck TTL ends."""

    pods_by_node: Mapping[str, Sequence[Pod]]
    group_of: Callable[[NodeView], str | None]
    group_options: Callable[[str], NodeGroupAutoscalingOptions]
    scale_down_unready_enabled: bool = True
    ignore_mirror_pods_utilization: bool = False
    gpu_resource: Callable[[NodeView], str | None] = field(default=lambda node: None)
    recently_unremovable: Mapping[str, float] = field(default_factory=dict)
    memo: UtilizationMemo | None = None  # answers kept from the last loop (the planner's)
    # The snapshot's version of each node's pods (``ClusterSnapshot.pods_version``), for the memos.
    pods_versions: Mapping[str, int] | None = None
    kept: EligibilityMemo | None = None  # the last rules' answers kept from the last loop


@dataclass(frozen=True, slots=True)
class EligibilityResult:
    candidates: tuple[str, ...]
    unremovable: dict[str, UnremovableReason]
    utilization: dict[str, Utilization]


@dataclass(slots=True)
class _Check:
    node: NodeView
    now: float
    inp: EligibilityInput
    group: str | None = None
    util: Utilization | None = None
    opts: NodeGroupAutoscalingOptions | None = None  # the group's options, once the group is known
    gpu: str | None = None  # the node's GPU resource, once utilization is computed


Rule = Callable[[_Check], UnremovableReason | None]


def _in_snapshot(c: _Check) -> UnremovableReason | None:
    return None if c.node.name in c.inp.pods_by_node else UnremovableReason.UNEXPECTED_ERROR


def _recently_unremovable(c: _Check) -> UnremovableReason | None:
    until = c.inp.recently_unremovable.get(c.node.name)
    return UnremovableReason.RECENTLY_UNREMOVABLE if until is not None and until > c.now else None


def _being_deleted(c: _Check) -> UnremovableReason | None:
    return UnremovableReason.CURRENTLY_BEING_DELETED if is_being_deleted(c.node, c.now) else None


def _disabled_annotation(c: _Check) -> UnremovableReason | None:
    disabled = c.node.annotations.get(SCALE_DOWN_DISABLED_ANNOTATION) == "true"
    return UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION if disabled else None


def _autoscaled(c: _Check) -> UnremovableReason | None:
    c.group = c.inp.group_of(c.node)
    return UnremovableReason.NOT_AUTOSCALED if c.group is None else None


def _utilization(c: _Check) -> UnremovableReason | None:
    assert c.group is not None
    opts = c.opts = c.inp.group_options(c.group)
    c.gpu = c.inp.gpu_resource(c.node)
    memo, versions = c.inp.memo, c.inp.pods_versions
    compute = node_utilization
    if memo is not None:
        version = None if versions is None else versions.get(c.node.name)
        compute = functools.partial(memo.utilization, version=version)
    try:
        c.util = compute(
            c.node,
            c.inp.pods_by_node[c.node.name],
            c.now,
            gpu_resource=c.gpu,
            ignore_daemonsets=opts.ignore_daemon_sets_utilization,
            ignore_mirror=c.inp.ignore_mirror_pods_utilization,
        )
    except ValueError:
        return UnremovableReason.UNEXPECTED_ERROR
    return None


def _unready_allowed(c: _Check) -> UnremovableReason | None:
    if not c.inp.scale_down_unready_enabled and not is_node_ready(c.node):
        return UnremovableReason.SCALE_DOWN_UNREADY_DISABLED
    return None


def _underutilized(c: _Check) -> UnremovableReason | None:
    assert c.util is not None and c.opts is not None  # set by the utilization rule
    opts = c.opts
    threshold = (
        opts.scale_down_gpu_utilization_threshold
        if c.gpu is not None
        else opts.scale_down_utilization_threshold
    )
    return UnremovableReason.NOT_UNDERUTILIZED if c.util.utilization > threshold else None


# Upstream order: snapshot lookup, recheck TTL, deletion in progress, annotation, group, utilization
# (which needs the group's options), unready, threshold.
RULES: tuple[Rule, ...] = (
    _in_snapshot,
    _recently_unremovable,
    _being_deleted,
    _disabled_annotation,
    _autoscaled,
    _utilization,
    _unready_allowed,
    _underutilized,
)


# The first three read the loop (the snapshot's nodes, the recheck TTLs, the time): run every loop.
# The others read only the node, its group and the group's options, its pods and the settings: their
# joint answer is kept per node while all of those are the same (EligibilityMemo).
_PER_LOOP = RULES[:3]
_PER_NODE = RULES[3:]


class EligibilityMemo:
    """The answer of the rules after the first three (reason, utilization) kept per node from one
    loop to the next, while the node's view is the very same object and its pods the same version,
    with the same group, group options, GPU resource and settings. Not kept for a node with a pod
    being deleted (its utilization then depends on the time)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple[object, ...], UnremovableReason | None, Utilization | None]] = {}

    def judge(self, check: _Check, version: int | None) -> UnremovableReason | None:
        """:func:`_judge`'s answer for ``check`` (whose pods have ``version``), kept or made."""
        inp, node = check.inp, check.node
        group = inp.group_of(node)
        opts = inp.group_options(group) if group is not None else None
        settings = (inp.scale_down_unready_enabled, inp.ignore_mirror_pods_utilization)
        key = (version, group, opts, inp.gpu_resource(node), settings)
        kept = self._kept.get(node.name)
        if kept is not None and kept[0][0] is node and kept[0][1:] == key:
            check.util = kept[2]
            return kept[1]
        reason = _judge(check)
        if version is not None and all(p.deletion_time is None for p in inp.pods_by_node[node.name]):
            self._kept[node.name] = ((node, *key), reason, check.util)
        else:
            self._kept.pop(node.name, None)
        return reason

    def keep_only(self, names: Collection[str]) -> None:
        """Forget nodes that are gone (called once a loop with the nodes present)."""
        if len(self._kept) > len(names):
            self._kept = {name: kept for name, kept in self._kept.items() if name in names}


def filter_out_unremovable(nodes: Sequence[NodeView], inp: EligibilityInput, now: float) -> EligibilityResult:
    candidates: list[str] = []
    unremovable: dict[str, UnremovableReason] = {}
    utilization: dict[str, Utilization] = {}
    memo, versions = inp.kept, inp.pods_versions
    for node in nodes:
        check = _Check(node, now, inp)
        reason = None
        for rule in _PER_LOOP:  # the first rule with a reason decides
            reason = rule(check)
            if reason is not None:
                break
        else:
            if memo is not None and versions is not None:
                reason = memo.judge(check, versions.get(node.name))
            else:
                reason = _judge(check)
        if check.util is not None:
            utilization[node.name] = check.util
        if reason is None:
            candidates.append(node.name)
        else:
            unremovable[node.name] = reason
    return EligibilityResult(tuple(candidates), unremovable, utilization)


def _judge(check: _Check) -> UnremovableReason | None:
    for rule in _PER_NODE:
        reason = rule(check)
        if reason is not None:
            return reason
    return None
