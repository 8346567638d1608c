"""Cross-section checks on a file that has other problems, so one run lists them all.

The checks of :mod:`checks` need a :class:`Scenario`, which a file with a schema problem does not
give. Here each value the schema refused is replaced by a stand-in it accepts (or, when none fits,
the entry holding it is cut out) until the rest validates, and the checks that read none of the
replaced places run on that. A check that reads a replaced place is skipped, never guessed at: a
stand-in group name, or a cut group, would make a correct reference look unknown.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from kubetide.model.errors import FieldError
from kubetide.sim.scenario.checks import READS, Check
from kubetide.sim.scenario.model import Scenario
from kubetide.sim.scenario.paths import PathError, parse_path

__all__ = ["Location", "checks_despite", "manifest_locations", "stand_in"]

# A place in the document: keys and list indices; "*" (in READS) stands for any index.
Location = tuple[str | int, ...]

# Values tried, in order, in place of a refused one: the kinds of value scenario fields take.
_STAND_INS: tuple[Any, ...] = (1, 0, "1", "1s", "1h", "a", 1000, True, [], {}, None)

# A refused stand-in can move the blame to a parent (a validator across fields): a few rounds.
_ROUNDS = 4
# Each place tried costs up to one validation of the file per stand-in: beyond this many places,
# the cross-section checks wait for the next run (the schema problems are listed either way).
_MAX_PLACES = 64


def _pattern(text: str) -> Location:
    # READS' patterns are plain names and "[*]".
    return tuple(text.replace("[*]", ".*").split("."))


# Each check with the places it reads, parsed once.
_READS: dict[Check, tuple[Location, ...]] = {
    check: tuple(_pattern(read) for read in reads) for check, reads in READS.items()
}


def _same(a: str | int, b: str | int) -> bool:
    return a == b or (a == "*" and isinstance(b, int)) or (b == "*" and isinstance(a, int))


def _overlap(a: Location, b: Location) -> bool:
    """Whether one place holds the other (or they are the same)."""
    return all(_same(x, y) for x, y in zip(a, b, strict=False))


def _within(place: Location, where: Location) -> bool:
    return len(place) >= len(where) and _overlap(place, where)


def _blamed(data: Any, err: Any) -> Location:
    """Where an error points in ``data``: the part of its ``loc`` that exists (pydantic's union
    tags and ``[key]`` are not keys there), plus the field's name when the field is missing."""
    node, out = data, []
    for part in err["loc"]:
        if _has(node, part):
            node = node[part]
            out.append(part)
    if err["type"] == "missing" and err["loc"] and isinstance(node, dict):
        out.append(err["loc"][-1])
    return tuple(out)


def _has(node: Any, part: Any) -> bool:
    if isinstance(node, dict):
        return isinstance(part, str | int) and part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def _parent(data: Any, where: Location) -> Any:
    node = data
    for part in where[:-1]:
        node = node[part]
    return node


def _errors_at(data: Any, where: Location) -> bool | None:
    """Whether ``data`` still has an error at or under ``where``; ``None`` when it validates."""
    try:
        Scenario.model_validate(data)
    except ValidationError as exc:
        return any(_within(_blamed(data, e), where) for e in exc.errors())
    return None


def _replace(data: Any, where: Location) -> bool:
    """Put the first stand-in the schema takes at ``where``; ``False`` (and nothing changed) if none."""
    parent = _parent(data, where)
    key = where[-1]
    had, old = (key in parent, parent.get(key)) if isinstance(parent, dict) else (True, parent[key])
    for value in _STAND_INS:
        parent[key] = value
        if not _errors_at(data, where):
            return True
    if had:
        parent[key] = old
    elif isinstance(parent, dict):
        del parent[key]
    return False


def _cut(data: Any, where: Location) -> Location:
    """Remove the list entry or mapping that holds ``where`` (a list entry: itself); where it was."""
    entry = where if isinstance(where[-1], int) else where[:-1]
    if len(entry) < 2:
        raise KeyError(entry)  # a whole section: too little would be left to check
    del _parent(data, entry)[entry[-1]]
    return entry


def stand_in(data: Any, first: ValidationError) -> tuple[Scenario | None, list[Location]]:
    """``data`` with every refused value replaced (or its entry cut), validated; and the places
    replaced or cut. ``None`` when nothing that validates is left."""
    fixed = copy.deepcopy(data)
    touched: list[Location] = []
    error = first
    for _ in range(_ROUNDS):
        places = sorted({_blamed(fixed, e) for e in error.errors()}, key=_later_first)
        if len(touched) + len(places) > _MAX_PLACES:
            return None, touched  # each stand-in costs a validation: a file this broken gets none
        for where in places:
            if len(where) < 2:
                return None, touched  # the document or a whole section is blamed: too little left
            try:
                touched.append(where if _replace(fixed, where) else _cut(fixed, where))
            except (KeyError, IndexError, TypeError):
                return None, touched  # an earlier cut moved it: give up rather than guess
        try:
            return Scenario.model_validate(fixed), touched
        except ValidationError as exc:
            error = exc
    return None, touched


def _later_first(where: Location) -> tuple[tuple[int, Any], ...]:
    # Cutting an entry moves the ones after it: handle later entries first.
    return tuple((0, -p) if isinstance(p, int) else (1, p) for p in where)


def manifest_locations(problems: Iterable[FieldError], object_paths: Sequence[str]) -> list[Location]:
    """Where the problems of Kubernetes manifests are, as places in the validated document (the
    objects list as expanded from Lists and files); the whole list when one cannot be placed."""
    out: list[Location] = []
    for problem in problems:
        out.append(_manifest_location(problem.path, object_paths) or ("spec", "objects"))
    return out


def _manifest_location(path: str, object_paths: Sequence[str]) -> Location | None:
    prefixes = [(p, ("spec", "objects", i)) for i, p in enumerate(object_paths)]
    try:
        if path.startswith("spec.actions["):
            parts = parse_path(path)
            return tuple(parts) if len(parts) >= 4 and parts[3] == "apply" else None
        for prefix, base in prefixes:
            if path == prefix or path.startswith((prefix + ".", prefix + "[")):
                return base + tuple(parse_path("x" + path[len(prefix) :])[1:])
    except PathError:
        return None
    return None


def checks_despite(scenario: Scenario, touched: Iterable[Location]) -> list[FieldError]:
    """The checks that read nothing in ``touched``, run on ``scenario``."""
    places = list(touched)
    problems: list[FieldError] = []
    for check, reads in _READS.items():
        if not any(_overlap(read, where) for read in reads for where in places):
            problems.extend(_run(check, scenario))
    return problems


def _run(check: Check, scenario: Scenario) -> list[FieldError]:
    try:
        return list(check(scenario))
    except Exception:  # the file already has problems; this check just cannot say more
        return []
