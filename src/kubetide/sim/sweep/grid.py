"""A sweep's runs: ``--grid KEY=V1,V2,...`` entries and ``--seeds N``, checked before anything runs.

Each grid value becomes the text of one ``--set KEY=TEXT`` (values are read exactly as ``simulate
--set`` reads them, by :func:`~kubetide.sim.scenario.overrides.parse_override`), so a run of the sweep
*is* ``kubetide simulate SCENARIO --set ... --seed N``. Values are split on commas; a value holding a
comma is written as a JSON list (``KEY=["a,b","c"]``: strings go in as written, other JSON values as
their JSON text, which YAML reads back as the same value).

Every problem is found before the first run: a bad path, an empty or repeated value, a key given twice,
a value the scenario rejects (checked alone, then every combination of the grid), each naming the grid
entry it comes from. A run is identified by its settings and seed (:attr:`RunSpec.key`), not by its
place in the grid, so a resumed sweep finds it whatever order the grid is given in.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubetide.model.errors import FieldError, ManifestError
from kubetide.sim.scenario import Scenario, load_scenario
from kubetide.sim.scenario.checks import unimplemented_autoscalers
from kubetide.sim.scenario.overrides import parse_override
from kubetide.sim.scenario.paths import PathError, format_path, parse_path
from kubetide.sim.simulation import IMPLEMENTED_AUTOSCALERS

__all__ = ["GridAxis", "RunSpec", "SweepPlan", "parse_grid", "plan_sweep"]

# The seed has its own option: a grid over spec.seed would collide with --seeds.
_SEED_PATH = ["spec", "seed"]


@dataclass(frozen=True)
class GridAxis:
    """One ``--grid`` entry: its path and the ``--set`` texts of its values, in the order written."""

    entry: str
    key: str
    texts: tuple[str, ...]
    values: tuple[Any, ...]


@dataclass(frozen=True)
class RunSpec:
    """One run: the ``(key, text)`` settings in grid order and the seed."""

    settings: tuple[tuple[str, str], ...]
    seed: int

    @property
    def overrides(self) -> tuple[str, ...]:
        return tuple(f"{key}={text}" for key, text in self.settings)

    @property
    def values(self) -> dict[str, Any]:
        """The settings as ``--set`` reads them (``"0.1"`` is the number 0.1): sweep.json's ``settings``."""
        return {key: parse_override(f"{key}={text}")[1] for key, text in self.settings}

    @property
    def key(self) -> str:
        """A stable name from the values (not their spelling: ``0.10`` and ``0.1`` are one run) and seed."""
        canonical = json.dumps(
            {"settings": sorted(self.values.items()), "seed": self.seed},
            sort_keys=True,
            default=str,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SweepPlan:
    scenario_path: Path
    scenario: Scenario  # as the file has it, without grid values
    scenario_sha256: str
    axes: tuple[GridAxis, ...]
    seeds: tuple[int, ...]
    runs: tuple[RunSpec, ...]


def _split(raw: str) -> list[str]:
    """``a,b`` -> ``["a", "b"]``; ``["a,b", 3]`` -> ``["a,b", "3"]``; raises ValueError naming the problem."""
    if raw.lstrip().startswith("["):
        try:
            items = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"values starting with '[' must be a JSON list: {exc.msg} at {exc.pos}"
            ) from None
        if not isinstance(items, list):
            raise ValueError("values starting with '[' must be a JSON list")
        texts = [item if isinstance(item, str) else json.dumps(item) for item in items]
    else:
        texts = [part.strip() for part in raw.split(",")]
    if not texts:
        raise ValueError("no values")
    if any(not text.strip() for text in texts):
        raise ValueError("an empty value (a comma too many?)")
    return texts


def _axis(entry: str) -> GridAxis:
    """One ``--grid`` argument; raises :class:`ManifestError` naming the entry."""
    where = f"--grid {entry}"
    key, sep, raw = entry.partition("=")
    if not sep or not key.strip():
        raise ManifestError.at(where, "expected KEY=V1,V2,...")
    try:
        parts = parse_path(key.strip())
    except PathError as exc:
        raise ManifestError.at(where, str(exc)) from None
    if parts == _SEED_PATH:
        raise ManifestError.at(where, "the seed is swept with --seeds N (the scenario's seed + 0..N-1)")
    try:
        texts = _split(raw)
    except ValueError as exc:
        raise ManifestError.at(where, str(exc)) from None
    path = format_path(parts)
    values = [parse_override(f"{path}={text}")[1] for text in texts]
    seen: set[str] = set()
    for text, value in zip(texts, values, strict=True):
        canonical = json.dumps(value, sort_keys=True, default=str)
        if canonical in seen:
            raise ManifestError.at(where, f"value {text!r} is given twice")
        seen.add(canonical)
    return GridAxis(entry, path, tuple(texts), tuple(values))


def _parse_grid(entries: Sequence[str]) -> tuple[tuple[GridAxis, ...], list[FieldError]]:
    axes: list[GridAxis] = []
    problems: list[FieldError] = []
    for entry in entries:
        try:
            axis = _axis(entry)
        except ManifestError as exc:
            problems.extend(exc.errors)
            continue
        twice = next((a for a in axes if a.key == axis.key), None)
        if twice is not None:
            problems.append(
                FieldError(f"--grid {entry}", f"{axis.key} is already swept by --grid {twice.entry}")
            )
            continue
        axes.append(axis)
    return tuple(axes), problems


def parse_grid(entries: Sequence[str]) -> tuple[GridAxis, ...]:
    """Every ``--grid`` entry, all problems together."""
    axes, problems = _parse_grid(entries)
    if problems:
        raise ManifestError(problems)
    return axes


def _check(path: Path, overrides: Sequence[str], where: str) -> list[FieldError]:
    """What the scenario says of these overrides, each problem prefixed with where they come from."""
    try:
        scenario = load_scenario(path, overrides)
    except ManifestError as exc:
        return [FieldError(where, str(problem)) for problem in exc.errors]
    return [FieldError(where, str(p)) for p in unimplemented_autoscalers(scenario, IMPLEMENTED_AUTOSCALERS)]


def plan_sweep(scenario_path: str | Path, entries: Sequence[str], seeds: int) -> SweepPlan:
    """The runs of a sweep, or a :class:`ManifestError` with every problem of the scenario and the grid.

    The scenario alone is checked first (its problems are not the grid's); then each value alone, naming
    its entry; then, when every value passes alone, each combination (a ``minSize`` above a swept
    ``maxSize`` only shows there). A check is one parse of the scenario (milliseconds).
    """
    path = Path(scenario_path)
    scenario = load_scenario(path)
    content = path.read_bytes()
    axes, problems = _parse_grid(entries)
    if seeds < 1:
        problems.append(FieldError("--seeds", f"must be at least 1, got {seeds}"))
    for axis in axes:
        found = [_check(path, [f"{axis.key}={text}"], "") for text in axis.texts]
        if len(found) > 1 and found[0] and all(f == found[0] for f in found):
            # Every value fails alike: the key is the problem (a misspelt path), said once.
            problems += [FieldError(f"--grid {axis.entry}", p.message) for p in found[0]]
            continue
        for text, value_problems in zip(axis.texts, found, strict=True):
            problems += [
                FieldError(f"--grid {axis.entry}: value {text!r}", p.message) for p in value_problems
            ]
    if not problems and len(axes) > 1:
        for combination in itertools.product(*(axis.texts for axis in axes)):
            overrides = [f"{axis.key}={text}" for axis, text in zip(axes, combination, strict=True)]
            problems += _check(path, overrides, f"--grid combination {', '.join(overrides)}")
    if problems:
        raise ManifestError(problems)
    base_seed = scenario.spec.seed
    seed_list = tuple(base_seed + i for i in range(seeds))
    settings = itertools.product(*([(axis.key, text) for text in axis.texts] for axis in axes))
    runs = tuple(RunSpec(tuple(combo), seed) for combo in settings for seed in seed_list)
    return SweepPlan(path, scenario, hashlib.sha256(content).hexdigest(), axes, seed_list, runs)
