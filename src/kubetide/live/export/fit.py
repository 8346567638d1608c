"""Fitting the document to the simulator's loader: drop what it rejects, and say so, rather than
write a file that does not load.

A cluster can hold what the simulator does not model (a field of a newer API, an HPA on a kind it
does not scale). The caller passes the loader as a checker (this package does not import the
simulator); each round drops the rejected field, or the whole object when the problem is the object
itself, and records a note naming both. Problems outside ``spec.objects`` are the exporter's own
bugs: they are raised, not hidden.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubetide.live.export.objects import ref

__all__ = ["Checker", "ExportError", "Problem", "fit_to_loader"]

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
MAX_ROUNDS = 20  # each round removes at least one thing; a real cluster needs two or three


@dataclass(frozen=True)
class Problem:
    """One problem the loader found: its path as parts (``("spec", "objects", 3, "spec")``)."""

    path: tuple[str | int, ...]
    message: str


Checker = Callable[[dict[str, Any]], list[Problem]]


class ExportError(Exception):
    """The document cannot be made loadable by dropping objects or their fields."""


def format_path(parts: tuple[str | int, ...]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN.match(part):
            out += f".{part}" if out else part
        else:
            out += f'["{part}"]'
    return out


def _drop_field(obj: dict[str, Any], rest: tuple[str | int, ...]) -> bool:
    """Delete ``rest`` inside ``obj``; False when it is not there (a missing field: not droppable)."""
    node: Any = obj
    for part in rest[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    last = rest[-1]
    if isinstance(node, dict) and last in node:
        del node[last]
        return True
    if isinstance(node, list) and isinstance(last, int) and last < len(node):
        del node[last]
        return True
    return False


def _related(a: tuple[str | int, ...], b: tuple[str | int, ...]) -> bool:
    """One path is the other or lies under it."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


@dataclass
class _Fitting:
    """What has been dropped so far, per object (by identity: indices shift as objects go)."""

    dropped_fields: dict[int, list[tuple[tuple[str | int, ...], str]]] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)

    def notes(self, objects: list[dict[str, Any]]) -> list[str]:
        fields = [
            f"{ref(obj)}: {format_path(path)} dropped ({message})"
            for obj in objects
            for path, message in self.dropped_fields.get(id(obj), [])
        ]
        return [*fields, *self.left_out]


def _one_round(objects: list[dict[str, Any]], problems: list[Problem], fitting: _Fitting) -> None:
    removed: set[int] = set()
    # Deepest and last paths first, so deleting one list item does not shift another problem's path.
    for problem in sorted(problems, key=lambda p: [str(x).zfill(8) for x in p.path], reverse=True):
        path = problem.path
        if len(path) < 3 or path[:2] != ("spec", "objects") or not isinstance(path[2], int):
            raise ExportError(f"{format_path(path)}: {problem.message}")
        index, rest = path[2], path[3:]
        if index in removed:
            continue
        obj = objects[index]
        earlier = fitting.dropped_fields.setdefault(id(obj), [])
        # A field is dropped once; a problem again at (or around) a dropped field means the object
        # needs it (a required field, a reference): the object goes, with one note for it.
        before = [(p, m) for p, m in earlier if _related(rest, p)]
        droppable = rest and rest[0] not in ("apiVersion", "kind", "metadata")
        if droppable and not before and _drop_field(obj, rest):
            earlier.append((rest, problem.message))
            continue
        # The first problem found there says why (the next is often "is required", after the drop).
        why_path, why = before[0] if before else (rest, problem.message)
        fitting.left_out.append(f"{ref(obj)} left out ({format_path(why_path) or 'the object'}: {why})")
        fitting.dropped_fields.pop(id(obj), None)
        removed.add(index)
    for index in sorted(removed, reverse=True):
        del objects[index]


def fit_to_loader(document: dict[str, Any], check: Checker) -> list[str]:
    """Drop from ``document`` (in place) what ``check`` rejects; the notes say what went, and why."""
    fitting = _Fitting()
    objects: list[dict[str, Any]] = document["spec"]["objects"]
    for _ in range(MAX_ROUNDS):
        problems = check(document)
        if not problems:
            return fitting.notes(objects)
        _one_round(objects, problems, fitting)
    raise ExportError(f"the scenario still does not load after {MAX_ROUNDS} rounds of fixes")
