"""Node templates per node group, as ``MixedTemplateNodeInfoProvider`` builds them (CA spec §5).

A real, stable node of the group is the best template: it is what the machines really look like. It
is sanitized (new name, CA's and the node lifecycle's taints dropped, only DaemonSet and mirror pods
kept) and cached, so a group scaled down to zero keeps its real shape. Without a real node or a cache
entry the provider's claimed template is used. When a group has both, the provider's claim is
compared with the observed node and every resource that differs is reported once
(``NodeTemplateMismatch``): that is the scale-from-zero trap users hit when cloud tags go stale.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from kubetide.cloud.instance import CloudProviderError, NodeTemplate, NotImplementedByProvider
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.readiness import NOT_READY_TAINTS, is_node_ready
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT, TO_BE_DELETED_TAINT
from kubetide.cluster.taintconfig import TaintConfig
from kubetide.model.node import HOSTNAME_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.predicates.node_affinity import matches_node_selection
from kubetide.scheduling.predicates.taint_toleration import first_untolerated_taint
from kubetide.scheduling.utilization import is_daemonset_pod, is_mirror_pod

__all__ = [
    "TEMPLATE_STABILIZATION_S",
    "TemplateMismatch",
    "TemplateProvider",
    "daemonset_exemplars",
    "sanitize",
    "with_daemonset_pods",
]

TEMPLATE_STABILIZATION_S = 60.0
TEMPLATE_NODE_LABEL = "cluster-autoscaler.kubernetes.io/template-node"
_DROPPED_TAINTS = frozenset(
    {
        TO_BE_DELETED_TAINT,
        DELETION_CANDIDATE_TAINT,
        *NOT_READY_TAINTS,
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.cloudprovider.kubernetes.io/shutdown",
        "cloud.google.com/impending-node-termination",
        "NodeWithImpairedVolumes",
    }
)
_COMPARED = ("cpu", "memory", "pods")
NO_SPECIAL_TAINTS = TaintConfig()  # only the built-in startup and status prefixes


@dataclass(frozen=True, slots=True)
class TemplateMismatch:
    group: str
    resource: str  # "allocatable.cpu", "capacity.memory", "label <key>", "taint <key>"
    template: str
    observed: str


def _kept_taint(key: str, taints: TaintConfig) -> bool:
    return key not in _DROPPED_TAINTS and not taints.left_out_of_templates(key)


def sanitize(
    group: str,
    node: NodeView,
    pods: Sequence[Pod],
    scale_from_unschedulable: bool,
    taints: TaintConfig = NO_SPECIAL_TAINTS,
) -> NodeTemplate:
    """``SanitizeTaints`` and friends: a template from a real node, without CA's own taints, the node
    lifecycle's condition taints, and the startup and status taints of ``taints``."""
    name = f"template-node-for-{group}"
    kept_taints = tuple(t for t in node.taints if _kept_taint(t.key, taints))
    view = replace(
        node,
        name=name,
        labels={**node.labels, HOSTNAME_LABEL: name, TEMPLATE_NODE_LABEL: "true"},
        taints=kept_taints,
        ready=True,
        unschedulable=False if scale_from_unschedulable else node.unschedulable,
        provider_id="",
    )
    kept = tuple(
        p.evolve(name=f"{p.name}-template", node_name="")
        for p in pods
        if p.deletion_time is None and (is_daemonset_pod(p) or is_mirror_pod(p))
    )
    return NodeTemplate(view, kept)


def daemonset_exemplars(pods: Iterable[Pod], from_templates: Iterable[Pod] = ()) -> tuple[Pod, ...]:
    """One pod per DaemonSet (by namespace and name), standing for the pod it would put on a new node:
    a running pod of it when there is one (a DaemonSet's pods differ only in their node), else the pod
    made from its template (``World.daemonsets``), so a DaemonSet with no pod anywhere yet counts too."""
    seen: dict[tuple[str, str], Pod] = {}
    for p in pods:
        ctrl = p.controller
        if ctrl is None or ctrl.kind != "DaemonSet" or p.deletion_time is not None or not p.node_name:
            continue
        seen.setdefault((p.namespace, ctrl.name), p)
    for p in from_templates:
        ctrl = p.controller
        if ctrl is not None:
            seen.setdefault((p.namespace, ctrl.name), p)
    return tuple(seen.values())


def with_daemonset_pods(template: NodeTemplate, exemplars: Sequence[Pod]) -> NodeTemplate:
    """CA's ``TemplateNodeInfo`` with forceDaemonSets: the pods of the DaemonSets that would run on the
    node and that the template does not list yet. Node selection is checked against the template's
    labels (name-based affinity, which the DaemonSet controller pins per node, against the pod's own
    node) and taints; resources are not, as upstream's check does not."""
    node = template.node
    have = {(p.namespace, c.name) for p in template.pods if (c := p.controller) is not None}
    added = []
    for p in exemplars:
        ctrl = p.controller
        if ctrl is None or (p.namespace, ctrl.name) in have:
            continue
        if not matches_node_selection(p, p.node_name, node.labels):
            continue
        if first_untolerated_taint(p, node.taints) is not None:
            continue
        added.append(p.evolve(name=f"{p.name}-template", node_name=""))
    if not added:
        return template
    return NodeTemplate(node, (*template.pods, *added))


def _good(node: NodeView, now: float) -> bool:
    """Ready for over a minute (approximated from creation), not cordoned, not being deleted."""
    created = node.creation_time if node.creation_time is not None else float("-inf")
    return (
        is_node_ready(node)
        and created + TEMPLATE_STABILIZATION_S < now
        and not node.unschedulable
        and not any(t.key == TO_BE_DELETED_TAINT for t in node.taints)
    )


def _fmt(value: object) -> str:
    return str(value)


def compare(
    group: str, claimed: NodeView, observed: NodeView, taints: TaintConfig = NO_SPECIAL_TAINTS
) -> list[TemplateMismatch]:
    out = []
    for part in ("allocatable", "capacity"):
        a, b = getattr(claimed, part), getattr(observed, part)
        for r in _COMPARED:
            if a.get(r, 0) != b.get(r, 0):
                out.append(TemplateMismatch(group, f"{part}.{r}", _fmt(a.get(r, 0)), _fmt(b.get(r, 0))))
    la = {k: v for k, v in claimed.labels.items() if not _own_label(k)}
    lb = {k: v for k, v in observed.labels.items() if not _own_label(k)}
    for key in sorted(la.keys() | lb.keys()):  # one per label: which, and both values
        if la.get(key) != lb.get(key):
            out.append(
                TemplateMismatch(group, f"label {key}", _or_absent(la.get(key)), _or_absent(lb.get(key)))
            )
    ta = _taints(claimed, taints)
    tb = _taints(observed, taints)
    for key in sorted(ta.keys() | tb.keys()):
        if ta.get(key) != tb.get(key):
            out.append(
                TemplateMismatch(group, f"taint {key}", _or_absent(ta.get(key)), _or_absent(tb.get(key)))
            )
    return out


ABSENT = "<absent>"
# Labels kubetide itself puts on nodes (the node agent's and the kwok provider's group label,
# ``kubetide.io/node-group``, on nodes a cloud's template knows nothing of): never a mismatch.
KUBETIDE_LABEL_PREFIX = "kubetide.io/"


def _own_label(key: str) -> bool:
    return key in (HOSTNAME_LABEL, TEMPLATE_NODE_LABEL) or key.startswith(KUBETIDE_LABEL_PREFIX)


def _or_absent(value: str | None) -> str:
    return ABSENT if value is None else value


def _taints(node: NodeView, taints: TaintConfig) -> dict[str, str]:
    """``key -> value:effect`` (several effects of one key joined), the template-relevant taints only."""
    out: dict[str, list[str]] = {}
    for t in node.taints:
        if _kept_taint(t.key, taints):
            out.setdefault(t.key, []).append(f"{t.value}:{t.effect}")
    return {k: ",".join(sorted(v)) for k, v in out.items()}


@dataclass
class TemplateProvider:
    """Templates per group id, recomputed each loop; the cache of real-node templates survives loops."""

    scale_from_unschedulable: bool = False
    cache_ttl: float = 87600 * 3600.0
    taints: TaintConfig = NO_SPECIAL_TAINTS
    cache: dict[str, tuple[NodeTemplate, float]] = field(default_factory=dict)
    reported: set[tuple[str, str]] = field(default_factory=set)
    compared: set[tuple[str, str]] = field(default_factory=set)  # (group, node) already compared
    # The last template made from a real node per group, with what it was made from: the same node
    # view and pod sequence (and settings) make the very same template again, so it is kept.
    _made: dict[str, tuple[NodeView, Sequence[Pod], bool, TaintConfig, NodeTemplate]] = field(
        default_factory=dict
    )

    def compute(
        self,
        groups: Sequence[NodeGroup],
        nodes: Sequence[NodeView],
        group_of: Mapping[str, str | None],
        pods_by_node: Mapping[str, Sequence[Pod]],
        now: float,
        daemonsets: Callable[[], Sequence[Pod]] = tuple,
    ) -> tuple[dict[str, NodeTemplate], list[TemplateMismatch]]:
        """``daemonsets``: one pod per DaemonSet (:func:`daemonset_exemplars`), added to templates that
        come from the provider, as upstream adds pending DaemonSets to them; called only when one does
        (it reads every pod). ``group_of``: each node's group id by node name (none when absent)."""
        exemplars: list[Sequence[Pod]] = []
        out: dict[str, NodeTemplate] = {}
        from_nodes: dict[str, NodeView] = {}
        bad: dict[str, NodeView] = {}
        # Once every group a node is in has its template, the other nodes change nothing.
        wanted = set(group_of.values())
        wanted.discard(None)
        for node in nodes:
            gid = group_of.get(node.name)
            if gid is None or gid in out:  # a group's first good node makes its template
                continue
            if _good(node, now):
                out[gid] = self._from_node(gid, node, pods_by_node.get(node.name, ()))
                from_nodes[gid] = node
                self.cache[gid] = (out[gid], now)
                if len(out) == len(wanted):
                    break
            elif gid not in bad:
                bad[gid] = node
        mismatches: list[TemplateMismatch] = []
        ids = {g.id() for g in groups}
        for g in groups:
            gid = g.id()
            observed = from_nodes.get(gid)
            compare_now = observed is not None and (gid, observed.name) not in self.compared
            claimed: NodeTemplate | None = None
            if compare_now or gid not in out:
                try:
                    claimed = g.template_node_info()
                except (NotImplementedByProvider, CloudProviderError):
                    claimed = None
            if compare_now and observed is not None and claimed is not None:
                self.compared.add((gid, observed.name))
                for m in compare(gid, claimed.node, observed, self.taints):
                    if (gid, m.resource) not in self.reported:
                        self.reported.add((gid, m.resource))
                        mismatches.append(m)
            if gid in out:
                continue
            cached = self.cache.get(gid)
            if cached is not None:
                if now - cached[1] > self.cache_ttl:
                    del self.cache[gid]
                else:
                    out[gid] = cached[0]
                    continue
            if claimed is not None:
                if not exemplars:
                    exemplars.append(daemonsets())
                out[gid] = with_daemonset_pods(sanitize(gid, claimed.node, claimed.pods, True), exemplars[0])
                continue
            if gid in bad:
                out[gid] = sanitize(
                    gid, bad[gid], pods_by_node.get(bad[gid].name, ()), self.scale_from_unschedulable
                )
        for gid in list(self.cache):
            if gid not in ids:
                del self.cache[gid]
        for gid in [gid for gid in self._made if gid not in ids]:
            del self._made[gid]
        return out, mismatches

    def _from_node(self, gid: str, node: NodeView, pods: Sequence[Pod]) -> NodeTemplate:
        """``sanitize`` of a group's first good node: the template made last time when it was made
        from the same view and pod sequence with the same settings (the result would be equal)."""
        made = self._made.get(gid)
        if (
            made is not None
            and made[0] is node
            and made[1] is pods
            and made[2] == self.scale_from_unschedulable
            and made[3] is self.taints
        ):
            return made[4]
        template = sanitize(gid, node, pods, self.scale_from_unschedulable, self.taints)
        self._made[gid] = (node, pods, self.scale_from_unschedulable, self.taints, template)
        return template
