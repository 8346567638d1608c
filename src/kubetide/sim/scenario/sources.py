"""Where a scenario's objects come from (§4): inline manifests, ``kind: List`` documents as ``kubectl get
-o yaml`` prints several objects, and files or directories of manifests (an ``objects`` entry that is a
string: a path relative to the scenario; a file may hold several YAML documents; a directory's
``*.yaml``, ``*.yml`` and ``*.json`` files are read in name order, as ``kubectl apply -f DIR``).

:func:`expand_objects` flattens them into one list of manifests, each with the location a user would
look for it at (``spec.objects[2]``, ``spec.objects[0].items[3]``, ``manifests/web.yaml[1]``), and
skips the Kubernetes kinds the simulator does not model (Service, Ingress, ...) with a note; a kind that
is not Kubernetes' at all is left in, for the object check to name it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubetide.model import yamldoc
from kubetide.model.errors import FieldError
from kubetide.model.strict import is_kubernetes_kind
from kubetide.sim.scenario.objects import OBJECT_VALIDATORS

__all__ = ["ExpandedObjects", "expand_objects"]

_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class ExpandedObjects:
    manifests: list[Any] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # where each manifest is, for its errors
    notes: list[str] = field(default_factory=list)  # what was skipped, for stderr
    problems: list[FieldError] = field(default_factory=list)


def expand_objects(entries: Any, base_dir: Path) -> ExpandedObjects:
    out = ExpandedObjects()
    if not isinstance(entries, list):
        return out
    for i, entry in enumerate(entries):
        where = f"spec.objects[{i}]"
        if isinstance(entry, str):
            _from_path(entry, base_dir, where, out)
        else:
            _add(entry, where, out)
    return out


def _add(manifest: Any, where: str, out: ExpandedObjects) -> None:
    if isinstance(manifest, Mapping):
        kind = manifest.get("kind")
        items = manifest.get("items")
        if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and isinstance(items, list)):
            for j, item in enumerate(items if isinstance(items, list) else []):
                _add(item, f"{where}.items[{j}]", out)
            return
        if isinstance(kind, str) and kind not in OBJECT_VALIDATORS and is_kubernetes_kind(kind):
            name = (manifest.get("metadata") or {}).get("name", "?")
            out.notes.append(
                f"{where}: {kind} {name!r} skipped (the simulator does not model {kind} objects)"
            )
            return
    out.manifests.append(manifest)
    out.paths.append(where)


def _from_path(entry: str, base_dir: Path, where: str, out: ExpandedObjects) -> None:
    path = base_dir / entry
    try:
        is_dir = path.is_dir()
        files = (
            sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in _SUFFIXES)
            if is_dir
            else []
        )
    except OSError as exc:  # a name too long, a directory that cannot be listed
        out.problems.append(FieldError(where, f"cannot read {entry!r}: {exc.strerror or exc}"))
        return
    if is_dir:
        if not files:
            out.problems.append(FieldError(where, f"directory {entry!r} has no .yaml, .yml or .json file"))
        for file in files:
            _from_file(file, f"{entry.rstrip('/')}/{file.name}", where, out)
    elif path.is_file():
        _from_file(path, entry, where, out)
    else:
        out.problems.append(FieldError(where, f"no file or directory {entry!r} (relative to the scenario)"))


def _from_file(path: Path, shown: str, where: str, out: ExpandedObjects) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.problems.append(
            FieldError(where, f"cannot read {shown!r}: {getattr(exc, 'strerror', None) or exc}")
        )
        return
    try:
        docs = yamldoc.load_documents(text, shown, multi=True, json_syntax=path.suffix.lower() == ".json")
    except yamldoc.YamlDocumentError as exc:
        out.problems.extend(FieldError(where, problem) for problem in exc.problems)
        return
    for d, doc in enumerate(docs):
        _add(doc, f"{shown}[{d}]", out)
