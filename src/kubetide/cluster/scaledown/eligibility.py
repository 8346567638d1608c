"""Which nodes may be considered for scale-down at all (``FilterOutUnremovable``, CA spec §7.3).

An ordered tuple of small rules, first match wins, each returning an unremovable reason: cheap,
side-effect-free checks first, then utilization (computed once), then the thresholds. A node that
passes is a candidate for the removal simulation; its utilization is returned for the status and
for ``explain``. Two rules depend on ``--ca-compatibility-version`` (:mod:`kubetide.cluster.compat`):
with 1.31 only strictly below the threshold passes (``isNodeBelowUtilizationThreshold``:
``utilization >= threshold`` blocks) and a node whose utilization cannot be computed (cpu or memory
allocatable missing or zero) is judged at utilization 0, as CA 1.31 logs the error and goes on with an
empty ``utilization.Info``; with 1.36 the threshold itself passes (``isNodeAtOrBelowUtilizationThreshold``,
1.35+) and such a node is ``UnexpectedError`` (1.32+).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kubetide.cloud.instance import NodeGroupAutoscalingOptions
from kubetide.cluster.clusterstate.readiness import is_node_ready
from kubetide.cluster.compat import DEFAULT_COMPATIBILITY, Compatibility
from kubetide.cluster.gpu import gpu_resource
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
# The empty ``utilization.Info`` CA 1.31 goes on with when a node's utilization cannot be computed.
UNKNOWN_UTILIZATION = Utilization(0.0, 0.0, 0.0, "")
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class EligibilityInput:
    """The loop's view: pods per node (None: the node is not in the snapshot), group per node, and
    each group's options; ``recently_unremovable`` maps node names to when their recheck TTL ends."""

    pods_by_node: Mapping[str, Sequence[Pod]]
    group_of: Mapping[str, str | None]  # by node name; a node not in it is in no group
    group_options: Callable[[str], NodeGroupAutoscalingOptions]
    scale_down_unready_enabled: bool = True
    ignore_mirror_pods_utilization: bool = False
    gpu_label: str = ""  # the cloud's GPU label: a node with it is a GPU node (cluster.gpu)
    recently_unremovable: Mapping[str, float] = field(default_factory=dict)
    memo: UtilizationMemo | None = None  # answers kept from the last loop (the planner's)
    # The snapshot's version of each node's pods (``ClusterSnapshot.pods_version``), for the memos.
    pods_versions: Mapping[str, int] | None = None
    kept: EligibilityMemo | None = None  # the last rules' answers kept from the last loop
    compat: Compatibility = DEFAULT_COMPATIBILITY  # --ca-compatibility-version


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


def _disabled_annotation(c: _Check) -> UnremovableReason | None:
    disabled = c.node.annotations.get(SCALE_DOWN_DISABLED_ANNOTATION) == "true"
    return UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION if disabled else None


def _autoscaled(c: _Check) -> UnremovableReason | None:
    c.group = c.inp.group_of.get(c.node.name)
    return UnremovableReason.NOT_AUTOSCALED if c.group is None else None


def _utilization(c: _Check) -> UnremovableReason | None:
    assert c.group is not None
    opts = c.opts = c.inp.group_options(c.group)
    c.gpu = gpu_resource(c.node, c.inp.gpu_label)
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
        if c.inp.compat.unknown_utilization_unremovable:
            return UnremovableReason.UNEXPECTED_ERROR  # 1.32+: return simulator.UnexpectedError
        # CA 1.31 (eligibility.go, unremovableReasonAndNodeUtilization) only logs a failed
        # utilization.Calculate and judges the zero Info it returned.
        c.util = UNKNOWN_UTILIZATION
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
    if c.inp.compat.threshold_inclusive:
        # 1.35+ isNodeAtOrBelowUtilizationThreshold: ``utilization > threshold`` is not underutilized.
        over = c.util.utilization > threshold
    else:
        # 1.31 isNodeBelowUtilizationThreshold: ``utilization >= threshold`` is not underutilized.
        over = c.util.utilization >= threshold
    return UnremovableReason.NOT_UNDERUTILIZED if over else None


# Upstream order: snapshot lookup, recheck TTL, deletion in progress (inline in
# filter_out_unremovable), then annotation, group, utilization (which needs the group's options),
# unready, threshold.
_PER_NODE: tuple[Rule, ...] = (
    _disabled_annotation,
    _autoscaled,
    _utilization,
    _unready_allowed,
    _underutilized,
)


class EligibilityMemo:
    """The answer of the rules after the first three (reason, utilization) kept per node from one
    loop to the next, while the node's view is the very same object and its pods the same version,
    with the same group, group options and settings (the GPU label among them). Not kept for a node
    with a pod being deleted (its utilization then depends on the time)."""

    def __init__(self) -> None:
        # node name -> (view, pods' version, group, options, settings, reason, utilization)
        self._kept: dict[str, tuple[Any, ...]] = {}
        self._same: dict[object, object] = {}  # one object per value of options and settings seen

    def same(self, value: _T) -> _T:
        """One object for equal values (group options, settings), so a kept answer is checked by
        identity: the options are made anew every loop."""
        if len(self._same) > 256:  # options that change all the time: forget the old ones
            self._same.clear()
        return self._same.setdefault(value, value)  # type: ignore[return-value]

    def judge(
        self,
        node: NodeView,
        now: float,
        inp: EligibilityInput,
        version: int | None,
        group: str | None,
        opts: NodeGroupAutoscalingOptions | None,
        settings: tuple[object, ...],
    ) -> tuple[UnremovableReason | None, Utilization | None]:
        """:func:`_judge`'s answer for ``node`` (whose pods have ``version``, in ``group`` with
        ``opts``; ``opts`` and ``settings`` as :meth:`same` gives them) and its utilization, kept
        for the next loop (:func:`filter_out_unremovable` looks a kept answer up itself)."""
        check = _Check(node, now, inp)
        reason = _judge(check)
        if version is not None and all(p.deletion_time is None for p in inp.pods_by_node[node.name]):
            self._kept[node.name] = (node, version, group, opts, settings, reason, check.util)
        else:
            self._kept.pop(node.name, None)
        return reason, check.util

    def keep_only(self, names: Collection[str]) -> None:
        """Forget nodes that are gone (called once a loop with the nodes present)."""
        if len(self._kept) > len(names):
            self._kept = {name: kept for name, kept in self._kept.items() if name in names}


def filter_out_unremovable(nodes: Sequence[NodeView], inp: EligibilityInput, now: float) -> EligibilityResult:
    candidates: list[str] = []
    unremovable: dict[str, UnremovableReason] = {}
    utilization: dict[str, Utilization] = {}
    memo, versions = inp.kept, inp.pods_versions
    opts_of: dict[str, NodeGroupAutoscalingOptions] = {}  # each group's, asked once
    settings: tuple[object, ...] = (
        inp.scale_down_unready_enabled,
        inp.ignore_mirror_pods_utilization,
        inp.gpu_label,
        inp.compat,
    )
    if memo is not None:
        settings = memo.same(settings)
    kept = memo._kept if memo is not None else {}
    pods_by_node, recently, group_of = inp.pods_by_node, inp.recently_unremovable, inp.group_of
    for node in nodes:
        util = None
        name = node.name
        # The first three rules read the loop and run every loop: the snapshot's nodes, the recheck
        # TTLs, the time (inline: they run for every node). The others read only the node, its group
        # and the group's options, its pods and the settings: they fill a _Check, and their joint
        # answer is kept per node while all of those are the same (EligibilityMemo).
        if name not in pods_by_node:
            reason: UnremovableReason | None = UnremovableReason.UNEXPECTED_ERROR
        elif (until := recently.get(name)) is not None and until > now:
            reason = UnremovableReason.RECENTLY_UNREMOVABLE
        elif node.taints and is_being_deleted(node, now):
            reason = UnremovableReason.CURRENTLY_BEING_DELETED
        else:
            if memo is not None and versions is not None:
                group = group_of.get(name)
                opts = None
                if group is not None:
                    opts = opts_of.get(group)
                    if opts is None:
                        opts = opts_of[group] = memo.same(inp.group_options(group))
                version = versions.get(name)
                # The answer kept: (view, version, group, options, settings, reason, utilization).
                k = kept.get(name)
                if (
                    k is not None
                    and k[0] is node
                    and k[1] == version
                    and k[2] == group
                    and k[3] is opts
                    and k[4] is settings
                ):
                    reason, util = k[5], k[6]
                else:
                    reason, util = memo.judge(node, now, inp, version, group, opts, settings)
            else:
                check = _Check(node, now, inp)
                reason, util = _judge(check), check.util
        if util is not None:
            utilization[name] = util
        if reason is None:
            candidates.append(name)
        else:
            unremovable[name] = reason
    return EligibilityResult(tuple(candidates), unremovable, utilization)


def _judge(check: _Check) -> UnremovableReason | None:
    for rule in _PER_NODE:
        reason = rule(check)
        if reason is not None:
            return reason
    return None
