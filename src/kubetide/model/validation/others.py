"""PodDisruptionBudgets, ConfigMaps and Nodes as the API server validates them
(``ValidatePodDisruptionBudget`` in ``pkg/apis/policy/validation``; ``ValidateConfigMap`` and
``ValidateNode`` in ``pkg/apis/core/validation``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetide.model.validation.checker import Checker
from kubetide.model.validation.meta import validate_label_key, validate_object_meta, validate_selector
from kubetide.model.validation.names import config_map_key, label_value
from kubetide.model.validation.resources import validate_node_resources
from kubetide.model.validation.workloads import int_or_percent

__all__ = ["CONFIG_MAP_MAX_BYTES", "validate_config_map", "validate_node", "validate_pdb", "validate_taints"]

CONFIG_MAP_MAX_BYTES = 1024 * 1024  # core.MaxSecretSize
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def validate_pdb(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    validate_object_meta(ck, manifest.get("metadata"), _at(path, "metadata"))
    where = _at(path, "spec")
    spec = ck.mapping(manifest.get("spec"), where) or {}
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        ck.add(where, "invalid value: minAvailable and maxUnavailable cannot be both set")
    int_or_percent(ck, spec.get("minAvailable"), f"{where}.minAvailable")
    int_or_percent(ck, spec.get("maxUnavailable"), f"{where}.maxUnavailable")
    validate_selector(ck, spec.get("selector"), f"{where}.selector")
    ck.enum(
        spec.get("unhealthyPodEvictionPolicy"),
        f"{where}.unhealthyPodEvictionPolicy",
        ("IfHealthyBudget", "AlwaysAllow"),
    )


def validate_config_map(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    validate_object_meta(ck, manifest.get("metadata"), _at(path, "metadata"))
    total = 0
    binary = manifest.get("binaryData")
    for key, value, where in ck.entries(manifest.get("data"), _at(path, "data")):
        ck.invalid(where, key, config_map_key(key))
        if isinstance(binary, Mapping) and key in binary:
            ck.add(where, f"invalid value {key!r}: duplicate of key present in binaryData")
        if isinstance(value, str):
            total += len(value.encode("utf-8", "surrogatepass"))
        elif not isinstance(value, bool | int | float):  # YAML scalars: the view keeps their text
            ck.add(where, f"must be a string, got {type(value).__name__}")
    for key, value, where in ck.entries(binary, _at(path, "binaryData")):
        ck.invalid(where, key, config_map_key(key))
        total += len(str(value))
    if total > CONFIG_MAP_MAX_BYTES:
        ck.add(path, f"too long: a ConfigMap holds at most {CONFIG_MAP_MAX_BYTES} bytes of data, got {total}")


def validate_taints(ck: Checker, value: Any, path: str) -> None:
    """``validateNodeTaints``: a qualified key, a label value, an effect, each key and effect once."""
    seen: set[tuple[str, str]] = set()
    for taint, where in ck.items(value, path):
        found = ck.mapping(taint, where)
        if found is None:
            continue
        key = ck.string(found.get("key"), f"{where}.key")
        if key is not None or found.get("key") is None:
            validate_label_key(ck, key or "", f"{where}.key")
        text = ck.string(found.get("value"), f"{where}.value")
        if text:
            ck.invalid(f"{where}.value", text, label_value(text))
        effect = found.get("effect")
        if effect is None or effect == "":
            ck.add(f"{where}.effect", "is required")
        else:
            ck.enum(effect, f"{where}.effect", _TAINT_EFFECTS)
        if isinstance(key, str) and isinstance(effect, str):
            if (key, effect) in seen:
                ck.add(where, f"duplicate value {key}:{effect}: taints must be unique by key and effect pair")
            seen.add((key, effect))


def validate_node(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    """``ValidateNode``: a DNS-1123 subdomain name, labels, taints (key, value, effect, each key and
    effect once), capacity and allocatable quantities."""
    validate_object_meta(ck, manifest.get("metadata"), _at(path, "metadata"), namespaced=False)
    spec = ck.mapping(manifest.get("spec"), _at(path, "spec")) or {}
    validate_taints(ck, spec.get("taints"), _at(path, "spec.taints"))
    status = ck.mapping(manifest.get("status"), _at(path, "status")) or {}
    validate_node_resources(ck, status.get("capacity"), _at(path, "status.capacity"))
    validate_node_resources(ck, status.get("allocatable"), _at(path, "status.allocatable"))
