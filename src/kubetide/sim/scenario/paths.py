"""Field paths as users write them: ``spec.nodeGroups[1].maxSize``, ``labels["node.kubernetes.io/x"]``.

One notation for error messages and for ``--set`` keys: dotted names, ``[i]`` list indices, and
``["key"]`` for map keys that are not plain names (they contain a dot, a slash or a space).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kubetide.model.errors import join_path

__all__ = ["PathError", "format_path", "join", "parse_path"]

_TOKEN = re.compile(r"""\.?([A-Za-z_][A-Za-z0-9_-]*)|\[([0-9]+)\]|\["((?:[^"\\]|\\.)*)"\]|\['([^']*)'\]""")


class PathError(ValueError):
    """A path that cannot be read; the message says where."""


def join(path: str, key: str | int) -> str:
    return join_path(path, key)


def format_path(parts: Iterable[str | int]) -> str:
    path = ""
    for part in parts:
        path = join(path, part)
    return path


def parse_path(text: str) -> list[str | int]:
    """``spec.nodeGroups[0].maxSize`` -> ``["spec", "nodeGroups", 0, "maxSize"]``."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if (
            match is None
            or (pos == 0 and text.startswith("."))
            or (pos > 0 and match.group(1) and text[pos] != ".")
        ):
            raise PathError(f'cannot read {text!r} at position {pos}: expected a name, [index] or ["key"]')
        name, index, quoted, single = match.groups()
        if name is not None:
            parts.append(name)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else single)
        pos = match.end()
    if not parts:
        raise PathError("empty path")
    return parts
