"""Reading plain manifests (dicts from YAML/JSON) with errors that name the field path.

A :class:`Node` wraps one value and its path (``spec.metrics[0].resource``); typed getters check the
type and raise :class:`ManifestError` with the path and the problem. Unknown fields are ignored, as the
API server does for the views we build.
"""

from __future__ import annotations

import builtins
import math
import sys
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from kubetide.model.errors import ManifestError
from kubetide.model.quantity import Quantity, QuantityError, parse_quantity

__all__ = ["Node", "parse_time"]
_FLOAT_MAX = int(sys.float_info.max)  # a larger int is no number a caller can compute with

_MISSING: Any = object()


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


class Node:
    """A value inside a manifest plus the path that leads to it."""

    __slots__ = ("path", "value")

    def __init__(self, value: Any, path: str = "") -> None:
        self.value = value
        self.path = path

    def _child_path(self, key: str | int) -> str:
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def error(self, message: str) -> ManifestError:
        return ManifestError.at(self.path, message)

    def mapping(self) -> Mapping[str, Any]:
        if self.value is None:
            return {}
        if not isinstance(self.value, Mapping):
            raise self.error(f"must be a mapping, got {_type_name(self.value)}")
        return self.value

    def get(self, key: str) -> Node:
        """Child node; a missing key yields a node whose value is None."""
        return Node(self.mapping().get(key), self._child_path(key))

    def has(self, key: str) -> bool:
        return self.mapping().get(key) is not None

    def items(self) -> Iterator[tuple[builtins.str, Node]]:
        for k, v in self.mapping().items():
            yield str(k), Node(v, self._child_path(str(k)))

    def list(self) -> list[Node]:
        if self.value is None:
            return []
        if not isinstance(self.value, list):
            raise self.error(f"must be a list, got {_type_name(self.value)}")
        return [Node(v, self._child_path(i)) for i, v in enumerate(self.value)]

    def str(self, default: Any = _MISSING) -> Any:
        if self.value is None:
            return self._default(default)
        if not isinstance(self.value, str):
            raise self.error(f"must be a string, got {_type_name(self.value)}")
        return self.value

    def int(self, default: Any = _MISSING, *, minimum: int | None = None) -> Any:
        if self.value is None:
            return self._default(default)
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            if isinstance(self.value, float) and self.value.is_integer():
                value = int(self.value)
            else:
                raise self.error(f"must be an integer, got {self.value!r}")
        else:
            value = self.value
        if minimum is not None and value < minimum:
            raise self.error(f"must be >= {minimum} (got {value})")
        return value

    def number(self, default: Any = _MISSING) -> Any:
        if self.value is None:
            return self._default(default)
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise self.error(f"must be a number, got {self.value!r}")
        if isinstance(self.value, float) and not math.isfinite(self.value):
            raise self.error(f"must be a finite number, got {self.value!r}")  # YAML's .nan and .inf
        if isinstance(self.value, int) and abs(self.value) > _FLOAT_MAX:  # no float holds it
            raise self.error(f"must be a finite number, got an integer of {len(str(abs(self.value)))} digits")
        return self.value

    def bool(self, default: Any = _MISSING) -> Any:
        if self.value is None:
            return self._default(default)
        if not isinstance(self.value, bool):
            raise self.error(f"must be true or false, got {self.value!r}")
        return self.value

    def quantity(self, default: Any = _MISSING) -> Any:
        if self.value is None:
            return self._default(default)
        try:
            return parse_quantity(self.value)
        except QuantityError as exc:
            raise self.error(str(exc)) from None

    def enum(self, choices: tuple[builtins.str, ...], default: Any = _MISSING) -> Any:
        value = self.str(default)
        if value is not None and value not in choices:
            raise self.error(f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def string_map(self) -> dict[builtins.str, builtins.str]:
        out: dict[builtins.str, builtins.str] = {}
        for k, v in self.items():
            if isinstance(v.value, bool | int | float):
                # YAML turns `tier: 1` into an int; Kubernetes would reject it, we keep its text.
                out[k] = str(v.value).lower() if isinstance(v.value, bool) else str(v.value)
            else:
                out[k] = v.str()
        return out

    def time(self, default: Any = _MISSING) -> Any:
        """An RFC 3339 timestamp as seconds since the epoch (float)."""
        if self.value is None:
            return self._default(default)
        if isinstance(self.value, datetime):
            return self.value.timestamp()
        if isinstance(self.value, int | float) and not isinstance(self.value, bool):
            return float(self.number())  # finite, and within a float's range (float(10**400) raises)
        try:
            return parse_time(self.str())
        except ValueError:
            raise self.error(
                f"must be an RFC 3339 time like 2024-01-02T03:04:05Z, got {self.value!r}"
            ) from None

    def _default(self, default: Any) -> Any:
        if default is _MISSING:
            raise self.error("is required")
        return default


def parse_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def quantity_or_none(node: Node) -> Quantity | None:
    result: Quantity | None = node.quantity(None)
    return result
