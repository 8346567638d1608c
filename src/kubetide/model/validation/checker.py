"""Reading a plain manifest for validation: every problem is collected, none stops the walk.

:class:`Checker` holds the problems found so far and reads values by path: a value of the wrong type is
one problem and reads as absent, so the rules after it still run on the rest of the object. Paths are
written as the rest of kubetide writes them (``spec.containers[0].name``, ``labels["app.kubernetes.io/x"]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubetide.model.errors import FieldError, join_path
from kubetide.model.numbers import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

__all__ = ["INT32", "INT64", "Checker"]

INT32 = (INT32_MIN, INT32_MAX)
INT64 = (INT64_MIN, INT64_MAX)


def _type_name(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


class Checker:
    """Problems found so far, and typed, forgiving reads of manifest values."""

    __slots__ = ("problems",)

    def __init__(self) -> None:
        self.problems: list[FieldError] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(FieldError(path, message))

    def invalid(self, path: str, value: Any, messages: tuple[str, ...] | list[str]) -> None:
        """The API server's ``Invalid value``: one problem per message, quoting the value."""
        for message in messages:
            self.add(path, f"invalid value {value!r}: {message}")

    # --- reads: None when absent or of the wrong type (then a problem is recorded)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.add(path, f"must be a mapping, got {_type_name(value)}")
            return None
        return value

    def items(self, value: Any, path: str) -> Iterator[tuple[Any, str]]:
        """A list's items with their paths (nothing when absent or not a list)."""
        if value is None:
            return
        if not isinstance(value, list):
            self.add(path, f"must be a list, got {_type_name(value)}")
            return
        for i, item in enumerate(value):
            yield item, f"{path}[{i}]"

    def entries(self, value: Any, path: str) -> Iterator[tuple[str, Any, str]]:
        """A mapping's ``(key, value, path)`` (nothing when absent or not a mapping)."""
        found = self.mapping(value, path)
        for key, item in (found or {}).items():
            yield str(key), item, join_path(path, str(key))

    def string(self, value: Any, path: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.add(path, f"must be a string, got {_type_name(value)}")
            return None
        return value

    def name(
        self, value: Any, path: str, rule: Callable[[str], tuple[str, ...]] | None = None, detail: str = ""
    ) -> str | None:
        """A required string (absent or empty: "is required", with ``detail``) checked by ``rule`` (a
        naming rule of :mod:`.names`, its messages quoted); None when absent, empty or of the wrong type."""
        text = self.string(value, path)
        if text is None and value is not None:
            return None  # the wrong type, already reported
        if not text:
            self.add(path, f"is required{': ' + detail if detail else ''}")
            return None
        if rule is not None:
            self.invalid(path, text, rule(text))
        return text

    def optional_string(self, value: Any, path: str) -> str | None:
        """A string whose absence means "" (Go's zero value); None only for a value of the wrong type,
        so the rules that read it can be skipped."""
        return "" if value is None else self.string(value, path)

    def integer(self, value: Any, path: str, bounds: tuple[int, int] = INT32) -> int | None:
        """An integer within ``bounds`` (Go's int32 by default: the API's JSON decoder refuses a value
        its field cannot hold). Integral floats (``3.0``) read as integers, as kubetide's views do."""
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(path, f"must be an integer, got {_type_name(value)}")
            return None
        low, high = bounds
        if not low <= value <= high:
            kind = "int32" if bounds == INT32 else "int64"
            self.add(path, f"out of range: an {kind} field holds {low}..{high}, got {value}")
            return None
        return value

    def count(self, value: Any, path: str) -> int | None:
        """An int32 whose absence means 0 (Go's zero value: the rules then judge 0); None: wrong type."""
        return 0 if value is None else self.integer(value, path)

    def enum(self, value: Any, path: str, choices: tuple[str, ...]) -> str | None:
        """The API server's ``Unsupported value``."""
        text = self.string(value, path)
        if text is not None and text not in choices:
            supported = ", ".join(f'"{c}"' for c in choices)
            self.add(path, f"unsupported value {text!r}: supported values: {supported}")
            return None
        return text

    def required(self, value: Any, path: str, detail: str = "") -> bool:
        """False (and a problem) when the value is absent or empty."""
        if value is None or value == "" or value == [] or value == {}:
            self.add(path, f"is required{': ' + detail if detail else ''}")
            return False
        return True

    def nonnegative(self, value: Any, path: str, bounds: tuple[int, int] = INT32) -> int | None:
        """``ValidateNonnegativeField``."""
        number = self.integer(value, path, bounds)
        if number is not None and number < 0:
            self.add(path, f"must be greater than or equal to 0, got {number}")
            return None
        return number
