"""Reading the capacity APIs' manifests with every problem at once, each with its field path.

:class:`Problems` collects what the field readers of :mod:`kubetide.model.fields` raise, so one bad
field does not hide the next; :func:`known_fields` reports the fields a mapping does not have (the
CRDs are structural: the API server prunes an unknown field silently, and a typo would then run
something else than the user wrote), with the closest known name.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

from kubetide.model.errors import FieldError, ManifestError, join_path
from kubetide.model.fields import Node

__all__ = ["Problems", "api_version", "known_fields"]

T = TypeVar("T")


class Problems:
    """Every problem of one manifest; :meth:`raise_any` raises them together."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def take(self, read: Callable[[], T], default: T) -> T:
        """``read()``, or ``default`` with its problems noted."""
        try:
            return read()
        except ManifestError as exc:
            self.errors.extend(exc.errors)
            return default

    def add(self, node: Node, message: str) -> None:
        self.errors.append(FieldError(node.path, message))

    def raise_any(self) -> None:
        if self.errors:
            raise ManifestError(self.errors)


def known_fields(node: Node, known: Collection[str], problems: Problems) -> None:
    """An ``unknown field`` problem for every key of ``node`` not in ``known``."""
    if not isinstance(node.value, dict):
        return
    for key in node.value:
        name = str(key)
        if name in known:
            continue
        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(sorted(known))})"
        problems.errors.append(FieldError(join_path(node.path, name), "unknown field" + hint))


def api_version(root: Node, versions: Sequence[str], problems: Problems) -> str:
    """The manifest's ``apiVersion`` (the first of ``versions`` when it has none), or a problem when it
    is none of them (the first of them is then read on)."""
    version: str = problems.take(lambda: root.get("apiVersion").str(versions[0]), versions[0])
    if version not in versions:
        problems.add(root.get("apiVersion"), f"must be {' or '.join(versions)}, got {version!r}")
        return versions[0]
    return version
