"""The scheduling vocabulary shared by pods and nodes: taints, tolerations, node and pod affinity terms,
topology spread constraints. Parsed from manifests; matching rules follow ``k8s.io/api/core/v1``
helpers (``ToleratesTaint``, ``NodeSelectorRequirementsAsSelector``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubetide.model.fields import Node
from kubetide.model.selectors import LabelSelector, Requirement

__all__ = [
    "NodeSelectorTerm",
    "PodAffinityTerm",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
]

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    @classmethod
    def parse(cls, node: Node) -> Taint:
        return cls(node.get("key").str(), node.get("value").str(""), node.get("effect").enum(TAINT_EFFECTS))

    def to_manifest(self) -> dict[str, str]:
        out = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        return out

    def describe(self) -> str:
        """kube-scheduler's ``{key: value}`` rendering used in 'untolerated taint' messages."""
        return f"{{{self.key}: {self.value}}}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""  # empty matches every effect
    # NoExecute only: how long the pod stays once such a taint is added (None: for ever).
    toleration_seconds: int | None = None

    @classmethod
    def parse(cls, node: Node) -> Toleration:
        operator = node.get("operator").enum(("Equal", "Exists"), "Equal")
        effect = node.get("effect").str("")
        if effect and effect not in TAINT_EFFECTS:
            raise node.get("effect").error(f"must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
        seconds = node.get("tolerationSeconds").int(None)
        if seconds is not None and effect != "NoExecute":
            raise node.get("tolerationSeconds").error(
                "is only allowed with effect NoExecute (API validation)"
            )
        return cls(node.get("key").str(""), operator, node.get("value").str(""), effect, seconds)

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        # Equal (the default): an empty key with Equal only matches an empty-key taint, as upstream.
        return self.key == taint.key and self.value == taint.value


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One term of required node affinity; its expressions (labels) and fields (name) are ANDed."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, node: Node) -> NodeSelectorTerm:
        return cls(_requirements(node.get("matchExpressions")), _requirements(node.get("matchFields")))

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        # An empty term matches nothing (upstream: "nil or empty term selects no objects").
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        fields = {"metadata.name": node_name}
        return all(r.matches(fields) for r in self.match_fields)


def _requirements(node: Node) -> tuple[Requirement, ...]:
    out = []
    for expr in node.list():
        op = expr.get("operator").enum(_NODE_SELECTOR_OPERATORS)
        values = tuple(v.str() for v in expr.get("values").list())
        if op in ("Gt", "Lt") and len(values) != 1:
            raise expr.get("values").error(f"must have exactly one value for operator {op}")
        out.append(Requirement(expr.get("key").str(), op, values))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """A required (anti-)affinity term: pods matching ``selector`` in ``namespaces`` within one
    ``topology_key`` domain. ``namespaces`` empty means the pod's own namespace."""

    selector: LabelSelector
    topology_key: str
    namespaces: tuple[str, ...] = ()
    all_namespaces: bool = False  # an empty namespaceSelector ({}) selects every namespace

    @classmethod
    def parse(cls, node: Node) -> PodAffinityTerm:
        ns_sel = node.get("namespaceSelector")
        all_ns = ns_sel.value is not None and LabelSelector.parse(ns_sel).empty
        return cls(
            LabelSelector.parse(node.get("labelSelector")) if node.has("labelSelector") else _NOTHING,
            node.get("topologyKey").str(),
            tuple(n.str() for n in node.get("namespaces").list()),
            all_ns,
        )

    def namespace_matches(self, own_namespace: str, other_namespace: str) -> bool:
        if self.all_namespaces:
            return True
        return other_namespace in (self.namespaces or (own_namespace,))


# A term without a labelSelector matches no pods.
_NOTHING = LabelSelector((Requirement("", "In", ()),))


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    selector: LabelSelector
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    match_label_keys: tuple[str, ...] = ()

    @classmethod
    def parse(cls, node: Node) -> TopologySpreadConstraint:
        return cls(
            node.get("maxSkew").int(minimum=1),
            node.get("topologyKey").str(),
            node.get("whenUnsatisfiable").enum(("DoNotSchedule", "ScheduleAnyway")),
            LabelSelector.parse(node.get("labelSelector")) if node.has("labelSelector") else _NOTHING,
            node.get("minDomains").int(None, minimum=1),
            node.get("nodeAffinityPolicy").enum(("Honor", "Ignore"), "Honor"),
            node.get("nodeTaintsPolicy").enum(("Honor", "Ignore"), "Ignore"),
            tuple(n.str() for n in node.get("matchLabelKeys").list()),
        )
