"""Which pods of a node must move, which are only evicted, and which block the node's removal:
Cluster Autoscaler's drainability rules (``simulator/drainability/rules``).

Rules run per pod in the order of :data:`RULES` (the order is upstream's, and it matters: the first rule
with an opinion decides, so ``safe-to-evict: "true"`` overrides every rule after it, and a terminal pod
is drainable before the "replicated" rule can block it). A node is blocked by its first blocking pod.
Time is an argument (``now``); nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector
from kubetide.scheduling.utilization import is_daemonset_pod, is_long_terminating, is_mirror_pod

__all__ = [
    "PDB",
    "RULES",
    "BlockReason",
    "DrainContext",
    "DrainMemo",
    "DrainOptions",
    "NodeDrain",
    "Outcome",
    "drain_node",
    "is_empty",
]

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
_REPLICATED_KINDS = ("ReplicationController", "Job", "ReplicaSet", "StatefulSet")
_LISTED_KINDS = ("ReplicationController", "ReplicaSet", "Job", "StatefulSet", "DaemonSet")


class Outcome(StrEnum):
    SKIP = "Skip"  # ignored: neither moved nor blocking
    DRAIN = "Drain"  # must be moved
    DAEMONSET = "DaemonSet"  # evicted with the node, not moved
    BLOCK = "Block"
    WAIT = "Wait"  # the node waits for the pod to complete


class BlockReason(StrEnum):
    NOT_REPLICATED = "NotReplicated"
    UNMOVABLE_KUBE_SYSTEM_POD = "UnmovableKubeSystemPod"
    NOT_SAFE_TO_EVICT_ANNOTATION = "NotSafeToEvictAnnotation"
    LOCAL_STORAGE_REQUESTED = "LocalStorageRequested"
    NOT_ENOUGH_PDB = "NotEnoughPdb"
    CONTROLLER_NOT_FOUND = "ControllerNotFound"
    MIN_REPLICAS_REACHED = "MinReplicasReached"
    BLOCKED_BY_ON_COMPLETION_POD = "BlockedByOnCompletionPod"


@dataclass(frozen=True, slots=True)
class DrainOptions:
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    min_replica_count: int = 0
    # CA 1.33's --blocking-system-pod-distruption-timeout; 0: never (CA 1.31 has no such timeout).
    blocking_system_pod_timeout_s: float = 0.0


@dataclass(frozen=True, slots=True)
class PDB:
    namespace: str
    selector: LabelSelector  # an empty selector matches every pod of the namespace
    disruptions_allowed: int

    def covers(self, pod: Pod) -> bool:
        return pod.namespace == self.namespace and self.selector.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class DrainContext:
    now: float
    options: DrainOptions = DrainOptions()
    pdbs: Sequence[PDB] = ()
    # Replicas of known controllers by (kind, namespace, name); None when there are no listers.
    controllers: Mapping[tuple[str, str, str], int] | None = None


Verdict = tuple[Outcome, BlockReason | None]
Rule = Callable[[Pod, DrainContext], Verdict | None]


def _mirror(pod: Pod, ctx: DrainContext) -> Verdict | None:
    return (Outcome.SKIP, None) if is_mirror_pod(pod) else None


def _long_terminating(pod: Pod, ctx: DrainContext) -> Verdict | None:
    return (Outcome.SKIP, None) if is_long_terminating(pod, ctx.now, pod.termination_grace_s) else None


def _replica_count(pod: Pod, ctx: DrainContext) -> Verdict | None:
    ctrl = pod.controller
    if ctx.controllers is None or not ctx.options.skip_nodes_with_custom_controller_pods or ctrl is None:
        return None
    if ctrl.kind not in _LISTED_KINDS:
        return None
    replicas = ctx.controllers.get((ctrl.kind, pod.namespace, ctrl.name))
    if replicas is None:
        return Outcome.BLOCK, BlockReason.CONTROLLER_NOT_FOUND
    if ctrl.kind in ("ReplicationController", "ReplicaSet") and replicas < ctx.options.min_replica_count:
        return Outcome.BLOCK, BlockReason.MIN_REPLICAS_REACHED
    return None


def _daemonset(pod: Pod, ctx: DrainContext) -> Verdict | None:
    return (Outcome.DAEMONSET, None) if is_daemonset_pod(pod) else None


def _safe_to_evict(pod: Pod, ctx: DrainContext) -> Verdict | None:
    return (Outcome.DRAIN, None) if pod.annotations.get(SAFE_TO_EVICT) == "true" else None


def _terminal(pod: Pod, ctx: DrainContext) -> Verdict | None:
    never = pod.restart_policy == "Never" and pod.phase in ("Succeeded", "Failed")
    done = pod.restart_policy == "OnFailure" and pod.phase == "Succeeded"
    return (Outcome.DRAIN, None) if never or done or pod.phase == "Failed" else None


def _on_completion(pod: Pod, ctx: DrainContext) -> Verdict | None:
    if pod.annotations.get(SAFE_TO_EVICT) == "on-completion":
        return Outcome.WAIT, BlockReason.BLOCKED_BY_ON_COMPLETION_POD
    return None


def _replicated(pod: Pod, ctx: DrainContext) -> Verdict | None:
    ctrl = pod.controller
    if ctrl is None:
        return Outcome.BLOCK, BlockReason.NOT_REPLICATED
    if ctx.options.skip_nodes_with_custom_controller_pods and ctrl.kind not in _REPLICATED_KINDS:
        return Outcome.BLOCK, BlockReason.NOT_REPLICATED
    return None


def _system(pod: Pod, ctx: DrainContext) -> Verdict | None:
    if not ctx.options.skip_nodes_with_system_pods or pod.namespace != "kube-system":
        return None
    if any(pdb.covers(pod) for pdb in ctx.pdbs):
        return None
    timeout = ctx.options.blocking_system_pod_timeout_s
    # CA 1.33's isBspPassedDisruptionTimeout (``now.After(creation + timeout)``; an unset creation time
    # never counts) makes the pod drainable, deciding it before the rules after this one. CA 1.31 has
    # no timeout: 0 here.
    if timeout > 0 and pod.creation_time is not None and pod.creation_time + timeout < ctx.now:
        return _DRAIN
    return Outcome.BLOCK, BlockReason.UNMOVABLE_KUBE_SYSTEM_POD


def _not_safe_to_evict(pod: Pod, ctx: DrainContext) -> Verdict | None:
    if pod.annotations.get(SAFE_TO_EVICT) == "false":
        return Outcome.BLOCK, BlockReason.NOT_SAFE_TO_EVICT_ANNOTATION
    return None


def _local_storage(pod: Pod, ctx: DrainContext) -> Verdict | None:
    if not ctx.options.skip_nodes_with_local_storage:
        return None
    allowed = {
        v.strip() for v in pod.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(",") if v.strip()
    }
    for volume in pod.volumes:
        empty_dir = volume.get("emptyDir")
        local = "hostPath" in volume or (
            empty_dir is not None and (empty_dir or {}).get("medium") != "Memory"
        )
        if local and volume.get("name") not in allowed:
            return Outcome.BLOCK, BlockReason.LOCAL_STORAGE_REQUESTED
    return None


def _pdb(pod: Pod, ctx: DrainContext) -> Verdict | None:
    if any(pdb.covers(pod) and pdb.disruptions_allowed < 1 for pdb in ctx.pdbs):
        return Outcome.BLOCK, BlockReason.NOT_ENOUGH_PDB
    return None


# Upstream's order; the first rule with a verdict decides. A pod no rule decides must be moved.
RULES: tuple[tuple[str, Rule], ...] = (
    ("mirror", _mirror),
    ("long-terminating", _long_terminating),
    ("replica-count", _replica_count),
    ("daemonset", _daemonset),
    ("safe-to-evict", _safe_to_evict),
    ("terminal", _terminal),
    ("on-completion", _on_completion),
    ("replicated", _replicated),
    ("system", _system),
    ("not-safe-to-evict", _not_safe_to_evict),
    ("local-storage", _local_storage),
    ("pdb", _pdb),
)


# The rules that read only the pod and the options (pods are immutable: their joint answer is kept on
# the pod), named; every other rule (the time, the controllers, the PDBs, or a rule added later) is
# run every time, in RULES' order.
_STATIC_NAMES = frozenset(
    (
        "mirror",
        "daemonset",
        "safe-to-evict",
        "terminal",
        "on-completion",
        "replicated",
        "not-safe-to-evict",
        "local-storage",
    )
)
_STATIC: tuple[Rule, ...] = tuple(rule for name, rule in RULES if name in _STATIC_NAMES)
_DYNAMIC: tuple[Rule, ...] = tuple(rule for name, rule in RULES if name not in _STATIC_NAMES)
# A plain pod not being deleted and outside kube-system gets nothing from the long-terminating and
# system rules, so only its controller's replicas and the PDBs decide: the quick path. Only while the
# dynamic rules are these four, in this order (a rule added later turns the quick path off).
_QUICK = tuple(name for name, _ in RULES if name not in _STATIC_NAMES) == (
    "long-terminating",
    "replica-count",
    "system",
    "pdb",
)
_PLAIN_ATTR = "_kubetide_drain_plain"
_SLOW = ("", "", "")  # a pod's kept answer when the quick path does not apply to it
_DRAIN: Verdict = (Outcome.DRAIN, None)
_NOT_FOUND: Verdict = (Outcome.BLOCK, BlockReason.CONTROLLER_NOT_FOUND)
_MIN_REPLICAS: Verdict = (Outcome.BLOCK, BlockReason.MIN_REPLICAS_REACHED)


def pod_verdict(pod: Pod, ctx: DrainContext) -> Verdict:
    kept = _kept(pod, ctx)
    if not kept[1]:
        return verdict_by_rules(pod, ctx)
    # No static rule has an opinion: the first dynamic one with a verdict decides, as in RULES.
    quick = kept[2]
    if quick is _SLOW:
        for rule in _DYNAMIC:
            verdict = rule(pod, ctx)
            if verdict is not None:
                return verdict
        return _DRAIN
    if quick is not None and ctx.controllers is not None:  # _replica_count, its key found beforehand
        replicas = ctx.controllers.get(quick)
        if replicas is None:
            return _NOT_FOUND
        if quick[0] in ("ReplicationController", "ReplicaSet") and replicas < ctx.options.min_replica_count:
            return _MIN_REPLICAS
    if ctx.pdbs:
        return _pdb(pod, ctx) or _DRAIN
    return _DRAIN


def verdict_by_rules(pod: Pod, ctx: DrainContext) -> Verdict:
    """Every rule in order: the plain reference :func:`pod_verdict` is property-tested against."""
    for _, rule in RULES:
        verdict = rule(pod, ctx)
        if verdict is not None:
            return verdict
    return Outcome.DRAIN, None


def _timeless(pod: Pod) -> bool:
    """Whether no rule reads the time for ``pod``: only the long-terminating rule (for pods being
    deleted) and the system rule (for kube-system pods) do, while the rules are upstream's. Such a
    pod also gets nothing from those two rules: the quick path applies to it."""
    return _QUICK and pod.deletion_time is None and pod.namespace != "kube-system"


def _kept(pod: Pod, ctx: DrainContext) -> tuple[DrainOptions, bool, tuple[str, str, str] | None]:
    """What only ``pod`` and the options decide, kept on the (immutable) pod: whether no static rule has
    a verdict (a node's pods are judged every loop, and almost all are plain replicated pods); and for
    the quick path, the controller key the replica-count rule looks up (None: that rule has no say),
    or ``_SLOW`` where the quick path does not apply."""
    cached: tuple[DrainOptions, bool, tuple[str, str, str] | None] | None = pod.__dict__.get(_PLAIN_ATTR)
    if cached is not None and (cached[0] is ctx.options or cached[0] == ctx.options):
        return cached
    plain = all(rule(pod, ctx) is None for rule in _STATIC)
    quick: tuple[str, str, str] | None = _SLOW
    if _timeless(pod):
        ctrl = pod.controller
        listed = ctrl is not None and ctrl.kind in _LISTED_KINDS
        quick = None
        if ctrl is not None and listed and ctx.options.skip_nodes_with_custom_controller_pods:
            quick = (ctrl.kind, pod.namespace, ctrl.name)
    kept = (ctx.options, plain, quick)
    pod.__dict__[_PLAIN_ATTR] = kept
    return kept


@dataclass(frozen=True, slots=True)
class NodeDrain:
    """What draining a node means: pods to move, DaemonSet pods to evict, or the pod that blocks it."""

    pods_to_move: tuple[Pod, ...] = ()
    daemonset_pods: tuple[Pod, ...] = ()
    on_completion_pods: tuple[Pod, ...] = ()
    blocking: tuple[Pod, BlockReason] | None = field(default=None)

    @property
    def drainable(self) -> bool:
        return self.blocking is None and not self.on_completion_pods


def drain_node(pods: Sequence[Pod], ctx: DrainContext) -> NodeDrain:
    move: list[Pod] = []
    daemonsets: list[Pod] = []
    waiting: list[Pod] = []
    for pod in pods:
        outcome, reason = pod_verdict(pod, ctx)
        if outcome is Outcome.BLOCK:
            assert reason is not None
            return NodeDrain(blocking=(pod, reason))
        if outcome is Outcome.DRAIN:
            move.append(pod)
        elif outcome is Outcome.DAEMONSET:
            daemonsets.append(pod)
        elif outcome is Outcome.WAIT:
            waiting.append(pod)
    return NodeDrain(tuple(move), tuple(daemonsets), tuple(waiting))


def is_empty(pods: Sequence[Pod], now: float) -> bool:
    """CA's ``EmptySorting.isNodeEmpty``: ``GetPodsToMove`` with no listers and no PDBs finds no pod that
    blocks and none to move. With the rules' order, that is: every pod is a mirror pod, a
    long-terminating pod or a DaemonSet pod (the rules before any that could move or block it decide
    it). Any other pod is moved (safe-to-evict, terminal, or no rule) or blocks, whatever the options."""
    for pod in pods:
        if not (
            is_mirror_pod(pod)
            or (pod.deletion_time is not None and is_long_terminating(pod, now, pod.termination_grace_s))
            or is_daemonset_pod(pod)
        ):
            return False
    return True


class DrainMemo:
    """:func:`drain_node`'s answers kept from one loop to the next, by node pods (the very same objects
    in the same order). An answer is kept only when no rule reads the time for any of the pods, and
    all are dropped when the options, the PDBs or any controller's replicas differ from the last
    loop's: then the rules read exactly what they read last time."""

    def __init__(self) -> None:
        self._inputs: object = None
        self._kept: dict[tuple[int, ...], tuple[tuple[Pod, ...], NodeDrain]] = {}

    def drainer(self, ctx: DrainContext) -> Callable[[Sequence[Pod]], NodeDrain]:
        """``drain_node`` with ``ctx`` for one loop; answers used or made in it are kept for the next."""
        inputs = (ctx.options, tuple(ctx.pdbs), None if ctx.controllers is None else dict(ctx.controllers))
        last = self._kept if inputs == self._inputs else {}
        self._inputs = inputs
        kept: dict[tuple[int, ...], tuple[tuple[Pod, ...], NodeDrain]] = {}
        self._kept = kept

        def drain(pods: Sequence[Pod]) -> NodeDrain:
            # The key is the pods' identities; the entry holds the pods, so no other object can
            # take one of those identities while it is kept.
            key = tuple(map(id, pods))
            hit = last.get(key)
            if hit is not None:
                kept[key] = hit
                return hit[1]
            answer = drain_node(pods, ctx)
            if all(map(_timeless, pods)):
                kept[key] = (tuple(pods), answer)
            return answer

        return drain
