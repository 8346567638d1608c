"""Reading a scenario file: YAML or JSON, ``--set`` overrides, then every check, all problems at once.

The pipeline: parse the document (syntax errors with line and column) -> apply overrides -> check the
header (a wrong ``kind`` stops here: the rest would be noise) -> validate the model (pydantic, errors
translated to field paths) and, independently, every Kubernetes manifest -> the cross-section checks
(on a file with other problems, those whose inputs are sound: :mod:`partial`). Anything wrong ends in
one :class:`ManifestError` listing every problem.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kubetide.model import yamldoc
from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.strict import unknown_fields
from kubetide.sim.scenario.action_sources import expand_actions, located
from kubetide.sim.scenario.checks import run_checks
from kubetide.sim.scenario.model import API_VERSION, KIND, Scenario
from kubetide.sim.scenario.objects import check_object
from kubetide.sim.scenario.overrides import apply_overrides
from kubetide.sim.scenario.partial import Location, checks_despite, manifest_locations, stand_in
from kubetide.sim.scenario.paths import PathError, parse_path
from kubetide.sim.scenario.sources import expand_objects
from kubetide.sim.scenario.translate import translate_errors

__all__ = ["load_scenario", "parse_document", "parse_scenario"]


def load_scenario(path: str | Path, overrides: Iterable[str] = ()) -> Scenario:
    """The scenario in ``path`` with ``overrides`` (``KEY=VALUE``) applied; raises :class:`ManifestError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError.at("", f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ManifestError.at("", f"cannot read {str(path)!r}: not UTF-8 text") from None
    data = parse_document(text, path.name, json_syntax=path.suffix.lower() == ".json")
    return parse_scenario(data, base_dir=path.parent, overrides=overrides)


def parse_document(text: str, name: str = "<scenario>", *, json_syntax: bool = False) -> Any:
    """One YAML (or JSON) document as plain data; syntax errors name the line and column."""
    try:
        return yamldoc.load_documents(text, name, json_syntax=json_syntax)[0]
    except yamldoc.YamlDocumentError as exc:
        raise ManifestError([FieldError("", problem) for problem in exc.problems]) from None


def _header(data: Mapping[str, Any]) -> list[FieldError]:
    problems = []
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        got = data.get(key)
        if got is None:
            problems.append(FieldError(key, f"is required ({key}: {want})"))
        elif got != want:
            problems.append(FieldError(key, f"must be {want}, got {got!r}"))
    return problems


def _manifests(data: Mapping[str, Any], object_paths: list[str]) -> Iterable[tuple[Any, str]]:
    spec = data.get("spec")
    if not isinstance(spec, Mapping):
        return
    objects = spec.get("objects")
    for i, manifest in enumerate(objects if isinstance(objects, list) else []):
        yield manifest, object_paths[i] if i < len(object_paths) else f"spec.objects[{i}]"
    actions = spec.get("actions")
    for i, action in enumerate(actions if isinstance(actions, list) else []):
        if isinstance(action, Mapping) and isinstance(action.get("apply"), Mapping):
            yield action["apply"], f"spec.actions[{i}].apply"


def _check_manifests(data: Mapping[str, Any], object_paths: list[str]) -> list[FieldError]:
    problems: list[FieldError] = []
    for manifest, path in _manifests(data, object_paths):
        problems.extend(unknown_fields(manifest, path))  # typos first: the rest may follow from them
        try:
            check_object(manifest, path)
        except ManifestError as exc:
            problems.extend(exc.errors)
        except Exception as exc:  # a view that tripped on odd input: still a message, never a traceback
            problems.append(FieldError(path, f"cannot be read ({type(exc).__name__}: {exc})"))
    return problems


def _position(data: Any, path: str) -> tuple[int, ...]:
    """Where ``path`` is in the document: key and item indices along it (unknown parts last)."""
    try:
        parts = parse_path(path)
    except PathError:
        return (1 << 30,)
    out: list[int] = []
    node = data
    for part in parts:
        if isinstance(node, dict) and part in node:
            out.append(list(node).index(part))
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            out.append(part)
            node = node[part]
        else:
            out.append(1 << 30)
            node = None
    return tuple(out)


def _in_document_order(data: Any, problems: list[FieldError]) -> list[FieldError]:
    """Problems sorted as a reader meets them going down the file (stable for equal positions)."""
    return sorted(problems, key=lambda p: _position(data, p.path))


def parse_scenario(
    data: Any, *, base_dir: str | Path | None = None, overrides: Iterable[str] = ()
) -> Scenario:
    """Validate plain data (as loaded from YAML/JSON); ``base_dir`` resolves csv paths (default cwd)."""
    if data is None:
        raise ManifestError.at("", "the scenario is empty (expected apiVersion, kind, metadata and spec)")
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"{type(data).__name__} {data!r}"[:80]
        raise ManifestError.at(
            "", f"the scenario must be a mapping (apiVersion, kind, metadata, spec), got {kind}"
        )
    data = apply_overrides(data, overrides)
    problems = _header(data)
    if problems:
        raise ManifestError(problems)
    directory = Path(base_dir) if base_dir is not None else Path.cwd()
    spec = data.get("spec")
    expanded = expand_objects(spec.get("objects") if isinstance(spec, dict) else None, directory)
    if isinstance(spec, dict) and isinstance(spec.get("objects"), list):
        # Validated as the flat list; messages point at the entries, Lists and files the user wrote.
        data = {**data, "spec": {**spec, "objects": expanded.manifests}}
    problems.extend(expanded.problems)
    actions = expand_actions(spec.get("actions") if isinstance(spec, dict) else None, directory)
    if actions.from_files:
        # The same for actions: validated flat, each problem said where its action is written.
        data = {**data, "spec": {**data["spec"], "actions": actions.actions}}
    problems.extend(actions.problems)
    scenario: Scenario | None = None
    partial: Scenario | None = None  # with stand-ins for the refused values (see partial.py)
    touched: list[Location] = []
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        problems.extend(translate_errors(exc, Scenario))
        partial, touched = stand_in(data, exc)
    manifest_problems = _check_manifests(data, expanded.paths)
    touched += manifest_locations(manifest_problems, expanded.paths)
    if expanded.problems:  # a file or directory that could not be read: objects may be missing
        touched.append(("spec", "objects"))
    if actions.problems:  # the same for an actions file: actions may be missing
        touched.append(("spec", "actions"))
    problems.extend(manifest_problems)
    checked = scenario or partial
    if checked is not None:
        checked._base_dir = directory
        checked._object_paths = expanded.paths
        checked._notes = expanded.notes
    if scenario is not None and not problems:
        problems.extend(run_checks(scenario))
    elif checked is not None:
        # Other problems: the cross-section checks still run on what is sound, so one run lists all.
        known = set(problems)
        problems.extend(p for p in checks_despite(checked, touched) if p not in known)
    if problems:
        ordered = _in_document_order(data, problems)
        if actions.from_files:
            unreadable = set(actions.problems)  # said at the entry that names the file already
            ordered = [p if p in unreadable else located(p, actions.paths) for p in ordered]
        raise ManifestError(ordered)
    assert scenario is not None
    return scenario
