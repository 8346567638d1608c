"""What one Cluster Autoscaler loop decided: a frozen :class:`LoopPlan`, phase after phase, in upstream's
order (``RunOnce``), each phase with its reasons. Nothing here acts: the actuator
(:mod:`kubetide.cluster.loop.actuator`) carries a plan out.

The phases, each a value:

* :class:`Notices`: what the decisions say with nothing to act on (a node matched by address, a
  template that differs from its nodes, the cluster unhealthy, a node that cannot be removed);
* housekeeping: :class:`TaintRemovals` (at start, stale taints; unneeded timers restored),
  :class:`ClusterStateFindings` (scale-ups found failed, timed-out ones reverted),
  :class:`UnregisteredRemovals` and :class:`FailedInstanceRemovals` (instances deleted),
  :class:`PartialDeliveryRemovals` (kubetide: the empty nodes of an atomic request that came only in part),
  :class:`SizeFixes` (targets nodes never filled, lowered), :class:`DrainRound` (one step of each
  deletion in progress), :class:`MinSizeRaises` (``--enforce-node-group-min-size``);
* the scale-up decision (:class:`~.scaleup_decision.ScaleUpDecision`: the pods, the groups skipped and
  why, the expander's trace, the groups and sizes chosen);
* the scale-down plan (:class:`~.scaledown_plan.ScaleDownPlan`: the soft taints to add and remove, the
  nodes to delete, empty or drained, and why each other node stays).

``stopped`` says why the loop ended before its last stage (upstream returns early: the cluster is
unhealthy, a size was fixed, a scale-up was made, a taint was refused).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.loop.deletions import DrainStep
from kubetide.cluster.loop.scaledown_plan import ScaleDownPlan
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.scaledown.unneeded import UnneededNode
from kubetide.model.node import NodeView

__all__ = [
    "ClusterStateFindings",
    "DrainRound",
    "FailedInstanceRemovals",
    "InstanceRemoval",
    "LoopPlan",
    "MinSizeRaise",
    "MinSizeRaises",
    "Notices",
    "PartialDeliveryRemoval",
    "PartialDeliveryRemovals",
    "Phase",
    "SizeChange",
    "SizeFixes",
    "TaintRemoval",
    "TaintRemovals",
    "UnregisteredRemovals",
]


@dataclass(frozen=True, slots=True)
class Notices:
    """Events a decision says, with nothing to act on; ``about`` names the decision."""

    about: str
    events: tuple[CAEvent, ...]


@dataclass(frozen=True, slots=True)
class TaintRemoval:
    """One taint to remove from a node: ``failure`` is the Warning's text should the API refuse;
    ``announce``: a Normal event says it was removed."""

    node: str
    key: str
    failure: str
    announce: bool


@dataclass(frozen=True, slots=True)
class TaintRemovals:
    """At start: stale ``ToBeDeleted`` taints, or stale soft taints, removed; ``restored``: the unneeded
    timers the soft taints brought back."""

    about: str
    removals: tuple[TaintRemoval, ...]
    restored: Mapping[str, UnneededNode] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SizeChange:
    """A group's target changed by ``delta`` (negative: lowered)."""

    group: str
    delta: int


@dataclass(frozen=True, slots=True)
class ClusterStateFindings:
    """What the cluster state found when it read the cloud (§2.6, §2.7): its events (the backoffs of
    the scale-ups it found failed among them), those failures by group and error code, and the
    timed-out scale-ups to revert (``--revert-timed-out-scale-ups``, ``--scale-up-progress-timeout``);
    ``recalculate``: the cluster state refreshes its targets once the reverts are made."""

    events: tuple[CAEvent, ...] = ()
    failed_scale_ups: tuple[tuple[str, str], ...] = ()  # (group, error code)
    backoffs: int = 0
    reverts: tuple[SizeChange, ...] = ()
    recalculate: bool = False


@dataclass(frozen=True, slots=True)
class InstanceRemoval:
    """Instances of a group to delete (``force``: ``ForceDeleteNodes``, without the min-size check)."""

    group: str
    instances: tuple[str, ...]
    force: bool


@dataclass(frozen=True, slots=True)
class UnregisteredRemovals:
    """``removeOldUnregisteredNodes``: instances unregistered past ``--max-node-provision-time``, by
    group; the first group whose deletion fails stops the others. ``kept``: instances kubetide did
    not launch, kept (said once)."""

    kept: tuple[CAEvent, ...] = ()
    removals: tuple[InstanceRemoval, ...] = ()


@dataclass(frozen=True, slots=True)
class FailedInstanceRemovals:
    """``deleteCreatedNodesWithErrors``: instances that failed to be created, by group."""

    removals: tuple[InstanceRemoval, ...] = ()


@dataclass(frozen=True, slots=True)
class PartialDeliveryRemoval:
    """The empty nodes of ``group`` that came for the atomic ProvisioningRequest ``request`` (its other
    nodes never did: ``kubetide.cluster.capacity.provisioning.delivery``)."""

    request: str
    group: str
    nodes: tuple[NodeView, ...]


@dataclass(frozen=True, slots=True)
class PartialDeliveryRemovals:
    """kubetide: all-or-nothing means none of it, so those nodes go at once (``DeleteNodes``)."""

    removals: tuple[PartialDeliveryRemoval, ...] = ()


@dataclass(frozen=True, slots=True)
class SizeFixes:
    """``fixNodeGroupSize``: targets the nodes never filled, lowered; a loop that fixes one ends."""

    fixes: tuple[SizeChange, ...] = ()


@dataclass(frozen=True, slots=True)
class DrainRound:
    """One step of each deletion: those in progress (``started`` False), or those the scale-down of
    this loop started."""

    steps: tuple[DrainStep, ...]
    started: bool = False


@dataclass(frozen=True, slots=True)
class MinSizeRaise:
    group: str
    target: int
    delta: int
    max_size: int


@dataclass(frozen=True, slots=True)
class MinSizeRaises:
    """``--enforce-node-group-min-size``: groups below their min size raised; the first failure stops."""

    raises: tuple[MinSizeRaise, ...] = ()


Phase = (
    Notices
    | TaintRemovals
    | ClusterStateFindings
    | UnregisteredRemovals
    | FailedInstanceRemovals
    | PartialDeliveryRemovals
    | SizeFixes
    | DrainRound
    | ScaleUpDecision
    | ScaleDownPlan
    | MinSizeRaises
)


@dataclass(frozen=True)
class LoopPlan:
    """The loop at ``now``: its phases in order, and why it stopped early (None: it ran through).
    ``groups``: the node groups as the cloud gave them at the loop's start, the handles the actuator
    acts through (not part of the decision)."""

    now: float
    phases: tuple[Phase, ...] = ()
    stopped: str | None = None
    groups: Mapping[str, NodeGroup] = field(default_factory=dict, compare=False, repr=False)

    def then(self, *phases: Phase) -> LoopPlan:
        return replace(self, phases=(*self.phases, *phases))

    def stop(self, why: str) -> LoopPlan:
        return replace(self, stopped=why)

    def only(self, *phases: Phase) -> LoopPlan:
        """A plan of these phases only, at the same time, through the same groups (one phase to act on)."""
        return replace(self, phases=phases, stopped=None)

    @property
    def scale_up(self) -> ScaleUpDecision | None:
        return next((p for p in self.phases if isinstance(p, ScaleUpDecision)), None)

    @property
    def scale_down(self) -> ScaleDownPlan | None:
        return next((p for p in self.phases if isinstance(p, ScaleDownPlan)), None)

    @property
    def housekeeping(self) -> tuple[Phase, ...]:
        """The phases that clean up or correct: everything but notices, scale-up and scale-down."""
        return tuple(p for p in self.phases if not isinstance(p, Notices | ScaleUpDecision | ScaleDownPlan))
