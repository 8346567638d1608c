"""The kwok provider's ``--cloud-config`` file and ``--nodes`` overrides, validated all at once.

Every problem is reported with its field path (``nodeGroups[1].maxSize: ...``) in one
:class:`KwokConfigError`, which the ``run`` commands turn into exit status 2. Without ``--nodes`` every
group of the file is managed; with it, only the groups it names, with its min and max (as CA's
``--nodes`` lists the groups it manages), and naming a group the file lacks is an error.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubetide.model import yamldoc
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.numbers import INT32_MAX, is_ascii_digits
from kubetide.model.validation import validate_object

__all__ = [
    "KwokConfigError",
    "KwokGroupConfig",
    "apply_nodes_flags",
    "load_cloud_config",
    "parse_cloud_config",
]

# A node is named "<group>-<5 chars>" and must be a DNS-1123 subdomain; the group name is also a label
# value (kubetide.io/node-group), so at most 63 characters.
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_GROUP_FIELDS = {"name", "minSize", "maxSize", "template", "provisioningDelay"}


class KwokConfigError(ManifestError):
    """A bad ``--cloud-config`` file or ``--nodes`` flag; ``errors`` lists every problem with its path."""


@dataclass(frozen=True)
class KwokGroupConfig:
    name: str
    min_size: int
    max_size: int
    template: dict[str, Any] = field(hash=False, compare=False)
    provisioning_delay: float = 0.0


def load_cloud_config(path: str | Path) -> list[KwokGroupConfig]:
    """The groups of the ``--cloud-config`` file. Errors about the file as a whole have an empty path
    and name the file in their message; the caller names the flag."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise KwokConfigError.at("", f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise KwokConfigError.at("", f"cannot read {path}: not UTF-8 text") from None
    try:
        (data,) = yamldoc.load_documents(text, str(path))
    except yamldoc.YamlDocumentError as exc:
        raise KwokConfigError([FieldError("", problem) for problem in exc.problems]) from None
    return parse_cloud_config(data)


def parse_cloud_config(data: Any) -> list[KwokGroupConfig]:
    errors: list[FieldError] = []
    if not isinstance(data, dict):
        raise KwokConfigError.at("", "must be a mapping with a nodeGroups list")
    for key in sorted(set(data) - {"nodeGroups"}, key=str):  # YAML keys may be numbers
        errors.append(FieldError(str(key), "unknown field (expected nodeGroups)"))
    items = data.get("nodeGroups")
    if not isinstance(items, list) or not items:
        errors.append(FieldError("nodeGroups", "must be a non-empty list of node groups"))
        raise KwokConfigError(errors)
    groups: list[KwokGroupConfig] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        path = f"nodeGroups[{index}]"
        group = _parse_group(item, path, errors)
        if group is None:
            continue
        if group.name in seen:
            errors.append(FieldError(f"{path}.name", f"duplicate node group name {group.name!r}"))
        seen.add(group.name)
        groups.append(group)
    if errors:
        raise KwokConfigError(errors)
    return groups


def _parse_group(item: Any, path: str, errors: list[FieldError]) -> KwokGroupConfig | None:
    if not isinstance(item, dict):
        errors.append(FieldError(path, "must be a mapping"))
        return None
    before = len(errors)
    for key in sorted(set(item) - _GROUP_FIELDS, key=str):
        errors.append(
            FieldError(f"{path}.{key}", f"unknown field (expected {', '.join(sorted(_GROUP_FIELDS))})")
        )
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > 57:
        errors.append(
            FieldError(f"{path}.name", "must be lowercase letters, digits and '-', at most 57 characters")
        )
    min_size = _size(item, "minSize", path, errors, default=0)
    max_size = _size(item, "maxSize", path, errors, default=None)
    if min_size is not None and max_size is not None and max_size < min_size:
        errors.append(FieldError(f"{path}.maxSize", f"must be >= minSize ({min_size}), got {max_size}"))
    delay = 0.0
    raw_delay = item.get("provisioningDelay", "0s")
    try:
        delay = parse_duration(raw_delay)  # also refuses NaN, infinities and negatives
    except DurationError as exc:
        errors.append(FieldError(f"{path}.provisioningDelay", f"must be a duration like 0s or 30s: {exc}"))
    template = item.get("template")
    _check_template(template, f"{path}.template", errors)
    if len(errors) > before:
        return None
    assert (
        isinstance(name, str) and isinstance(template, dict) and min_size is not None and max_size is not None
    )
    return KwokGroupConfig(name, min_size, max_size, copy.deepcopy(template), delay)


def _size(
    item: dict[str, Any], key: str, path: str, errors: list[FieldError], default: int | None
) -> int | None:
    value = item.get(key, default)
    if value is None:
        errors.append(FieldError(f"{path}.{key}", "is required"))
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= INT32_MAX:
        errors.append(
            FieldError(
                f"{path}.{key}", f"must be a non-negative integer (at most {INT32_MAX}), got {value!r}"
            )
        )
        return None
    return value


def _check_template(template: Any, path: str, errors: list[FieldError]) -> None:
    if not isinstance(template, dict):
        errors.append(
            FieldError(path, "is required: a Node manifest with status.capacity or status.allocatable")
        )
        return
    meta = template.get("metadata") or {}
    if not isinstance(meta, dict):
        errors.append(FieldError(f"{path}.metadata", "must be a mapping"))
    status = template.get("status") or {}
    if not isinstance(status, dict):
        errors.append(FieldError(f"{path}.status", "must be a mapping"))
        return
    if not status.get("capacity") and not status.get("allocatable"):
        errors.append(FieldError(f"{path}.status", "needs capacity or allocatable (cpu, memory, pods)"))
    # Then every rule the API server applies to a Node (name, labels, taints, quantities within int64
    # milli-units); the name is the provider's to give, a stand-in is checked when the file has none.
    if not isinstance(meta, dict):
        return
    named = {**template, "kind": "Node", "metadata": {"name": "template", **meta}}
    known = {e.path for e in errors}
    errors += [e for e in validate_object(named, path) if e.path not in known]


def apply_nodes_flags(groups: Sequence[KwokGroupConfig], flags: Sequence[str]) -> list[KwokGroupConfig]:
    """The groups to manage: all of ``groups`` without flags; else those the ``MIN:MAX:NAME`` flags name,
    with the flags' sizes."""
    if not flags:
        return list(groups)
    by_name = {g.name: g for g in groups}
    errors: list[FieldError] = []
    chosen: dict[str, KwokGroupConfig] = {}
    for flag in flags:
        where = f"--nodes={flag}"
        parts = flag.split(":", 2)
        if len(parts) != 3 or not is_ascii_digits(parts[0]) or not is_ascii_digits(parts[1]):
            errors.append(FieldError(where, "expected MIN:MAX:NAME with non-negative integers"))
            continue
        low, high, name = int(parts[0]), int(parts[1]), parts[2]
        if high < low:
            errors.append(FieldError(where, f"max ({high}) is below min ({low})"))
        if name not in by_name:
            known = ", ".join(sorted(by_name)) or "none"
            errors.append(FieldError(where, f"unknown node group {name!r} (the cloud config has: {known})"))
            continue
        if name in chosen:
            errors.append(FieldError(where, f"node group {name!r} given twice"))
        chosen[name] = replace(by_name[name], min_size=low, max_size=high)
    if errors:
        raise KwokConfigError(errors)
    return list(chosen.values())
