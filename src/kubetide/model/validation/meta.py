"""Object metadata, labels, annotations and label selectors, as the API server validates them
(``ValidateObjectMeta`` in ``k8s.io/apimachinery/pkg/api/validation``, ``ValidateLabels`` and
``ValidateLabelSelector`` in ``k8s.io/apimachinery/pkg/apis/meta/v1/validation``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubetide.model.validation.checker import Checker
from kubetide.model.validation.names import dns1123_label, dns1123_subdomain, label_value, qualified_name

__all__ = [
    "ANNOTATIONS_MAX_BYTES",
    "NameRule",
    "selector_is_empty",
    "selector_matches",
    "validate_annotations",
    "validate_label_key",
    "validate_labels",
    "validate_object_meta",
    "validate_requirement",
    "validate_selector",
]

NameRule = Callable[[str], tuple[str, ...]]

ANNOTATIONS_MAX_BYTES = 256 * 1024  # totalAnnotationSizeLimitB


def validate_label_key(ck: Checker, key: str, path: str) -> None:
    ck.invalid(path, key, qualified_name(key))


def validate_labels(ck: Checker, value: Any, path: str) -> dict[str, str]:
    """Keys are qualified names, values label values; a value that is not a string (YAML's ``tier: 1``)
    is refused as the API's decoder refuses it. Returns the well-formed labels."""
    out: dict[str, str] = {}
    for key, item, where in ck.entries(value, path):
        validate_label_key(ck, key, where)
        if not isinstance(item, str):
            hint = f' (quote it: "{str(item).lower() if isinstance(item, bool) else item}")'
            ck.add(where, f"must be a string, got {item!r}{hint if isinstance(item, int | float) else ''}")
            continue
        ck.invalid(where, item, label_value(item))
        out[key] = item
    return out


def validate_annotations(ck: Checker, value: Any, path: str) -> None:
    """``ValidateAnnotations``: keys are qualified names (lower-cased first), at most 256 KiB in all."""
    total = 0
    for key, item, where in ck.entries(value, path):
        ck.invalid(where, key, qualified_name(key.lower()))
        if not isinstance(item, str):
            ck.add(where, f"must be a string, got {item!r}")
            continue
        total += len(key.encode()) + len(item.encode("utf-8", "surrogatepass"))
    if total > ANNOTATIONS_MAX_BYTES:
        ck.add(path, f"too long: may not be more than {ANNOTATIONS_MAX_BYTES} bytes, got {total}")


def validate_object_meta(
    ck: Checker,
    meta: Any,
    path: str,
    name_rule: NameRule = dns1123_subdomain,
    *,
    namespaced: bool = True,
) -> Mapping[str, Any]:
    """Name (by ``name_rule``), namespace (a DNS-1123 label), labels, annotations, owner references.
    Returns the metadata mapping (empty when absent or malformed)."""
    found = ck.mapping(meta, path) or {}
    name = ck.string(found.get("name"), f"{path}.name")
    if name is None and found.get("name") is None:
        if not found.get("generateName"):
            ck.add(f"{path}.name", "is required")
    elif name == "":
        ck.add(f"{path}.name", "is required")
    elif name is not None:
        ck.invalid(f"{path}.name", name, name_rule(name))
    namespace = ck.string(found.get("namespace"), f"{path}.namespace")
    if namespaced and namespace:
        ck.invalid(f"{path}.namespace", namespace, dns1123_label(namespace))
    validate_labels(ck, found.get("labels"), f"{path}.labels")
    validate_annotations(ck, found.get("annotations"), f"{path}.annotations")
    _owner_references(ck, found.get("ownerReferences"), f"{path}.ownerReferences")
    return found


def _owner_references(ck: Checker, value: Any, path: str) -> None:
    """``ValidateOwnerReferences`` for what kubetide reads of a reference: its kind and name set, at
    most one controller (``apiVersion`` and ``uid`` are not read, and trimmed exports leave them out)."""
    controller: str | None = None
    for ref, where in ck.items(value, path):
        found = ck.mapping(ref, where)
        if found is None:
            continue
        for key in ("kind", "name"):
            text = ck.string(found.get(key), f"{where}.{key}")
            if not text:
                ck.add(f"{where}.{key}", "must not be empty")
        if found.get("controller") is True:
            if controller is not None:
                ck.add(
                    path,
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{controller} and {found.get('name')}",
                )
            else:
                controller = str(found.get("name"))


def validate_selector(ck: Checker, value: Any, path: str) -> Mapping[str, Any] | None:
    """``ValidateLabelSelector``: matchLabels as labels; each expression's operator, key and values
    (``In``/``NotIn`` need values, ``Exists``/``DoesNotExist`` take none; values are label values, as
    for a new object). Returns the selector mapping, or None when absent or invalid (upstream's
    ``LabelSelectorAsSelector`` fails then, and nothing is matched against it)."""
    found = ck.mapping(value, path)
    if found is None:
        return None
    before = len(ck.problems)
    validate_labels(ck, found.get("matchLabels"), f"{path}.matchLabels")
    for expr, where in ck.items(found.get("matchExpressions"), f"{path}.matchExpressions"):
        found_expr = ck.mapping(expr, where)
        if found_expr is None:
            continue
        listed = validate_requirement(ck, found_expr, where, numeric=False)
        for item, item_path in listed:
            text = ck.string(item, item_path)
            if text is not None:
                ck.invalid(item_path, text, label_value(text))
    return found if len(ck.problems) == before else None


def validate_requirement(
    ck: Checker, requirement: Mapping[str, Any], path: str, *, numeric: bool
) -> list[tuple[Any, str]]:
    """A selector requirement's key (a qualified name), operator and how many values it takes
    (``ValidateLabelSelectorRequirement``; ``numeric``: a node selector's, with ``Gt``/``Lt`` and their
    one value, ``ValidateNodeSelectorRequirement``). Returns the values with their paths."""
    operator = ck.string(requirement.get("operator"), f"{path}.operator")
    values = list(ck.items(requirement.get("values"), f"{path}.values"))
    if operator in ("In", "NotIn"):
        if not values:
            ck.add(f"{path}.values", "is required: must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            ck.add(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif numeric and operator in ("Gt", "Lt"):
        if len(values) != 1:
            ck.add(
                f"{path}.values",
                "is required: must be specified single value when `operator` is 'Lt' or 'Gt'",
            )
    else:
        ck.add(f"{path}.operator", f"invalid value {operator!r}: not a valid selector operator")
    key = ck.string(requirement.get("key"), f"{path}.key")
    if key is not None or requirement.get("key") is None:
        validate_label_key(ck, key or "", f"{path}.key")
    return values


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a (validated) label selector selects ``labels``; malformed parts select nothing."""
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        return False
    for key, value in match_labels.items():
        if labels.get(str(key)) != value:
            return False
    expressions = selector.get("matchExpressions") or []
    for expr in expressions if isinstance(expressions, list) else []:
        if not isinstance(expr, Mapping):
            return False
        key, operator = str(expr.get("key")), expr.get("operator")
        values = expr.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def selector_is_empty(selector: Mapping[str, Any]) -> bool:
    return not selector.get("matchLabels") and not selector.get("matchExpressions")
