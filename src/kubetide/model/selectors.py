"""Label selectors (``matchLabels`` / ``matchExpressions`` and the ``a=b,c in (d)`` string form).

Semantics follow ``k8s.io/apimachinery/pkg/labels``: requirements are ANDed; ``NotIn`` and
``DoesNotExist`` match objects without the key; an empty selector matches everything, a missing one
nothing (callers decide which applies).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kubetide.model.errors import ManifestError
from kubetide.model.fields import Node

__all__ = ["LabelSelector", "Requirement", "parse_selector_string"]

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist (also Gt/Lt for node selectors)
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return labels.get(self.key) in self.values
        if op == "NotIn":
            return labels.get(self.key) not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            return _compare_int(labels.get(self.key), self.values, op)
        return False


def _compare_int(value: str | None, values: tuple[str, ...], op: str) -> bool:
    if value is None or len(values) != 1:
        return False
    try:
        have, want = int(value), int(values[0])
    except ValueError:
        return False
    return have > want if op == "Gt" else have < want


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed selector; ``requirements`` are ANDed. No requirements matches every object."""

    requirements: tuple[Requirement, ...] = ()
    # Selectors key lookup tables on hot paths: hash once.
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self.requirements))

    def __hash__(self) -> int:
        return self._hash

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    @classmethod
    def parse(cls, node: Node) -> LabelSelector:
        reqs = [Requirement(k, "In", (v,)) for k, v in sorted(node.get("matchLabels").string_map().items())]
        for expr in node.get("matchExpressions").list():
            op = expr.get("operator").enum(_OPERATORS)
            values = tuple(v.str() for v in expr.get("values").list())
            if op in ("In", "NotIn") and not values:
                raise expr.get("values").error(f"must be non-empty for operator {op}")
            if op in ("Exists", "DoesNotExist") and values:
                raise expr.get("values").error(f"must be empty for operator {op}")
            reqs.append(Requirement(expr.get("key").str(), op, values))
        return cls(tuple(reqs))

    def __str__(self) -> str:
        parts = []
        for r in self.requirements:
            if r.operator == "In" and len(r.values) == 1:
                parts.append(f"{r.key}={r.values[0]}")
            elif r.operator == "In":
                parts.append(f"{r.key} in ({','.join(r.values)})")
            elif r.operator == "NotIn":
                parts.append(f"{r.key} notin ({','.join(r.values)})")
            elif r.operator == "Exists":
                parts.append(r.key)
            else:
                parts.append(f"!{r.key}")
        return ",".join(parts)


_SET_RE = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ_RE = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")
_KEY_RE = re.compile(r"^\s*(!?)\s*([A-Za-z0-9./_-]+)\s*$")


def parse_selector_string(text: str) -> LabelSelector:
    """Parse the string form used by the scale subresource's ``status.selector``."""
    reqs: list[Requirement] = []
    for part in _split_top_level(text):
        if not part.strip():
            raise ManifestError.at("", f"invalid selector {text!r}: empty requirement")
        if m := _SET_RE.match(part):
            values = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append(Requirement(m.group(1), "In" if m.group(2) == "in" else "NotIn", values))
        elif m := _EQ_RE.match(part):
            op = "NotIn" if m.group(2) == "!=" else "In"
            reqs.append(Requirement(m.group(1), op, (m.group(3),)))
        elif m := _KEY_RE.match(part):
            reqs.append(Requirement(m.group(2), "DoesNotExist" if m.group(1) else "Exists"))
        else:
            raise ManifestError.at("", f"invalid selector {text!r}: cannot parse {part.strip()!r}")
    return LabelSelector(tuple(reqs))


def _split_top_level(text: str) -> list[str]:
    if not text.strip():
        return []
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts
