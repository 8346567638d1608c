"""``CapacityQuota`` (``autoscaling.x-k8s.io/v1beta1``, and ``v1alpha1``): limits on the nodes a label
selector picks, as Cluster Autoscaler 1.36 defines them (``apis/capacityquota``), read into a view.

Cluster-scoped. ``spec.selector`` (none or empty: every node) and ``spec.limits.resources`` (``cpu``,
``memory``, ``nodes`` or another resource such as a GPU; non-negative integers, milli quantities refused,
at most 20, names of at most 63 characters); ``status.used`` and the Valid and Reconciled conditions.

kubetide's extension: minimums, which CA dropped from the API's design (an annotation, so CA's CRD keeps
it): ``kubetide.io/min-resources: "cpu=8,nodes=2"``. Scale-down keeps the selected nodes at or above them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.model.capacity.conditions import Condition, parse_conditions
from kubetide.model.capacity.reading import Problems, api_version, known_fields
from kubetide.model.errors import FieldError, join_path
from kubetide.model.fields import Node
from kubetide.model.quantity import Quantity, QuantityError, parse_quantity
from kubetide.model.selectors import LabelSelector

__all__ = ["MIN_RESOURCES_ANNOTATION", "QUOTA_API_VERSIONS", "CapacityQuota", "parse_quota_resources"]

GROUP = "autoscaling.x-k8s.io"
QUOTA_API_VERSIONS = (f"{GROUP}/v1beta1", f"{GROUP}/v1alpha1")
MIN_RESOURCES_ANNOTATION = "kubetide.io/min-resources"
VALID, RECONCILED = "Valid", "Reconciled"


def _integer_quantity(raw: Any) -> tuple[Quantity | None, str | None]:
    """The CRD's rule: a non-negative integer quantity, milli quantities refused (``1000m`` too)."""
    if isinstance(raw, bool):
        return None, f"must be a quantity, got {raw!r}"
    try:
        quantity = parse_quantity(raw)
    except QuantityError as exc:
        return None, str(exc)
    text = str(raw)
    if quantity.amount < 0 or text.startswith("-"):
        return None, f"must be a non-negative integer, got {raw!r}"
    if quantity.amount.denominator != 1 or text.endswith("m"):
        return None, f"must be an integer quantity (milli quantities are refused), got {raw!r}"
    return quantity, None


def parse_quota_resources(text: str) -> dict[str, int]:
    """``kubetide.io/min-resources``: ``name=quantity`` pairs separated by commas; ValueError otherwise."""
    out: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, raw = part.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{part!r} is not name=quantity")
        quantity, problem = _integer_quantity(raw.strip())
        if quantity is None:
            raise ValueError(f"{name.strip()}: {problem}")
        out[name.strip()] = quantity.value
    return out


@dataclass(frozen=True, slots=True)
class CapacityQuota:
    name: str
    uid: str = ""
    generation: int = 0
    api_version: str = QUOTA_API_VERSIONS[0]
    selector: LabelSelector | None = None  # None: every node
    limits: Mapping[str, int] = field(default_factory=dict, hash=False, compare=False)  # Value(): ceil
    minimums: Mapping[str, int] = field(default_factory=dict, hash=False, compare=False)  # kubetide
    conditions: tuple[Condition, ...] = ()
    used: Mapping[str, str] | None = field(default=None, hash=False, compare=False)

    @property
    def id(self) -> str:
        """The quota's name in CA's messages (``exceeded quota: "CapacityQuota/<name>"``)."""
        return f"CapacityQuota/{self.name}"

    def applies_to(self, labels: Mapping[str, str]) -> bool:
        return self.selector is None or self.selector.matches(labels)

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "") -> CapacityQuota:
        root = Node(manifest, path)
        problems = Problems()
        meta, spec, status = root.get("metadata"), root.get("spec"), root.get("status")
        version = api_version(root, QUOTA_API_VERSIONS, problems)
        known_fields(spec, ("selector", "limits"), problems)
        known_fields(status, ("used", "conditions"), problems)
        selector_node = spec.get("selector")
        selector = None
        if selector_node.value is not None:
            known_fields(selector_node, ("matchLabels", "matchExpressions"), problems)
            selector = problems.take(lambda: LabelSelector.parse(selector_node), None)
        limits_node = spec.get("limits")
        known_fields(limits_node, ("resources",), problems)
        resources = limits_node.get("resources")
        if resources.value is None:
            problems.add(resources, "is required")
        limits = _resources(resources, problems)
        annotations: dict[str, str] = problems.take(lambda: meta.get("annotations").string_map(), {})
        minimums: dict[str, int] = {}
        if MIN_RESOURCES_ANNOTATION in annotations:
            try:
                minimums = parse_quota_resources(annotations[MIN_RESOURCES_ANNOTATION])
            except ValueError as exc:
                where = join_path(meta.get("annotations").path, MIN_RESOURCES_ANNOTATION)
                problems.errors.append(FieldError(where, str(exc)))
        quota = cls(
            name=problems.take(lambda: meta.get("name").str(), ""),
            uid=problems.take(lambda: meta.get("uid").str(""), ""),
            generation=problems.take(lambda: meta.get("generation").int(0), 0),
            api_version=version,
            selector=selector,
            limits=limits,
            minimums=minimums,
            conditions=problems.take(lambda: parse_conditions(status.get("conditions")), ()),
            used=_used(status, problems),
        )
        problems.raise_any()
        return quota


def _resources(node: Node, problems: Problems) -> dict[str, int]:
    items: list[tuple[str, Node]] = problems.take(lambda: list(node.items()), [])
    if len(items) > 20:
        problems.add(node, f"must have at most 20 resources, got {len(items)}")
    out: dict[str, int] = {}
    for name, value in items:
        if len(name) > 63:
            problems.add(value, "resource names must be 63 characters or less")
            continue
        quantity, problem = _integer_quantity(value.value)
        if quantity is None:
            problems.add(value, problem or "must be a quantity")
            continue
        out[name] = quantity.value
    return out


def _used(status: Node, problems: Problems) -> dict[str, str] | None:
    used: dict[str, str] = problems.take(lambda: status.get("used").get("resources").string_map(), {})
    return used or None
