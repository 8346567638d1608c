"""``--set KEY=VALUE``: change one field of the scenario document before it is validated.

``KEY`` is a path in the notation of error messages (``spec.nodeGroups[0].maxSize``,
``spec.autoscalers.clusterAutoscaler.flags.expander``, ``...labels["team.io/x"]``); ``VALUE`` is read as
YAML (``5`` is a number, ``true`` a boolean, ``{a: 1}`` a mapping, anything unreadable a plain string).
Missing mappings along the way are created, so a sweep can set a flag of a section the file omits;
list items must exist (an index one past the end appends).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import yaml

from kubetide.model.errors import FieldError, ManifestError
from kubetide.sim.scenario.paths import PathError, format_path, parse_path

__all__ = ["apply_overrides", "parse_override"]


def parse_override(text: str) -> tuple[list[str | int], Any]:
    """``"a.b[0]=5"`` -> ``(["a", "b", 0], 5)``; raises :class:`ManifestError` naming the problem."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ManifestError.at("--set", f"expected KEY=VALUE, got {text!r}")
    try:
        parts = parse_path(key.strip())
    except PathError as exc:
        raise ManifestError.at("--set", str(exc)) from None
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except (yaml.YAMLError, ValueError, RecursionError):
        value = raw
    return parts, value


def _set(data: dict[str, Any], parts: list[str | int], value: Any) -> None:
    node: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = format_path(parts[:i]) or "the document"
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ManifestError.at(format_path(parts), f"cannot set: {where} is not a list (--set)")
            if part > len(node):
                raise ManifestError.at(
                    format_path(parts), f"cannot set: {where} has {len(node)} item(s) (--set)"
                )
            if part == len(node):
                node.append(value if last else {})
            elif last:
                node[part] = value
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise ManifestError.at(format_path(parts), f"cannot set: {where} is not a mapping (--set)")
            if last:
                node[part] = value
            elif node.get(part) is None:
                node[part] = [] if isinstance(parts[i + 1], int) else {}
            node = node[part]


def apply_overrides(data: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """A copy of ``data`` with every override applied; all bad overrides are reported together."""
    result = copy.deepcopy(data)
    problems: list[FieldError] = []
    for text in overrides:
        try:
            parts, value = parse_override(text)
            _set(result, parts, value)
        except ManifestError as exc:
            problems.extend(exc.errors)
    if problems:
        raise ManifestError(problems)
    return result
