"""Where a scenario's actions come from (§6 extended): inline entries, and files of actions.

An ``actions`` entry that is a string names a file relative to the scenario: ``.jsonl`` holds one action
per line (JSON; blank lines skipped), as ``kubetide record`` appends them while it records, so a crash
leaves every line written before it; ``.yaml``, ``.yml`` or ``.json`` hold documents, each one action
or a list of them. :func:`expand_actions` flattens them into one list, each with the place a user looks
for it at (``spec.actions[2]``, ``actions.jsonl:12``, ``more.yaml[0][3]``); :func:`located` rewrites a
problem's path from the flattened list (``spec.actions[40].scale``) to that place
(``actions.jsonl:12.scale``). A line that is not JSON (a line cut short by a crash) is an error
naming the file and line, never skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubetide.model import yamldoc
from kubetide.model.errors import FieldError

__all__ = ["ExpandedActions", "expand_actions", "located"]

_FLAT = re.compile(r"^spec\.actions\[(\d+)\]")


@dataclass
class ExpandedActions:
    actions: list[Any] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # where each action is, for its errors
    problems: list[FieldError] = field(default_factory=list)
    from_files: bool = False  # whether any entry named a file (else the paths are the flat ones)


def expand_actions(entries: Any, base_dir: Path) -> ExpandedActions:
    out = ExpandedActions()
    if not isinstance(entries, list):
        return out
    for i, entry in enumerate(entries):
        where = f"spec.actions[{i}]"
        if isinstance(entry, str):
            out.from_files = True
            _from_file(entry, base_dir, where, out)
        else:
            out.actions.append(entry)
            out.paths.append(where)
    return out


def _from_file(entry: str, base_dir: Path, where: str, out: ExpandedActions) -> None:
    path = base_dir / entry
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "no such file (relative to the scenario)" if isinstance(exc, FileNotFoundError) else None
        detail = reason or getattr(exc, "strerror", None) or str(exc)
        out.problems.append(FieldError(where, f"cannot read actions from {entry!r}: {detail}"))
        return
    if path.suffix.lower() == ".jsonl":
        _json_lines(text, entry, where, out)
        return
    try:
        docs = yamldoc.load_documents(text, entry, multi=True, json_syntax=path.suffix.lower() == ".json")
    except yamldoc.YamlDocumentError as exc:
        out.problems.extend(FieldError(where, problem) for problem in exc.problems)
        return
    for d, doc in enumerate(docs):
        if isinstance(doc, list):
            for j, action in enumerate(doc):
                out.actions.append(action)
                out.paths.append(f"{entry}[{d}][{j}]")
        else:
            out.actions.append(doc)
            out.paths.append(f"{entry}[{d}]")


def _json_lines(text: str, entry: str, where: str, out: ExpandedActions) -> None:
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except ValueError as exc:
            torn = number == len(lines) and not text.endswith("\n")
            cut = " (the last line, cut short: resume the recording to repair it)" if torn else ""
            out.problems.append(FieldError(where, f"{entry} line {number}: not JSON{cut}: {exc}"))
            continue
        out.actions.append(action)
        out.paths.append(f"{entry}:{number}")


def located(problem: FieldError, paths: list[str]) -> FieldError:
    """``problem`` with a flattened ``spec.actions[N]`` prefix replaced by where action N is written."""
    match = _FLAT.match(problem.path)
    if match is None:
        return problem
    index = int(match.group(1))
    if index >= len(paths):
        return problem
    return FieldError(paths[index] + problem.path[match.end() :], problem.message)
