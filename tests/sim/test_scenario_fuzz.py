"""Fuzzing the loader: whatever the input, the outcome is a Scenario or a ManifestError, nothing else."""

from __future__ import annotations

import contextlib
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_strategies import DATA_DIR, scenarios

from kubetide.cli import main
from kubetide.model.errors import ManifestError
from kubetide.sim.scenario import Scenario, load_scenario, parse_document, parse_scenario
from kubetide.sim.scenario.bounds import MAX_DURATION_S
from mutations import HOSTILE, places

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenario-minimal.yaml"
VALID: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(
        ["90s", "1h30m", "500m", "16Gi", "m5.large", "Deployment/default/web", "step", "csv", "-1", "1e400"]
    ),
)
_values = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=10), st.integers()), children, max_size=4),
    ),
    max_leaves=20,
)


def outcome(data: Any) -> Scenario | ManifestError:
    try:
        return parse_scenario(data, base_dir=EXAMPLE.parent)
    except ManifestError as exc:
        assert exc.errors and all(str(e) for e in exc.errors)
        return exc


_ALL_PATHS = places(VALID)[1:]


def _mutate(doc: dict[str, Any], path: tuple[Any, ...], action: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "replace":
        parent[last] = value
    elif action == "add" and isinstance(parent[last], dict):
        parent[last]["fuzz"] = value
    elif action == "add" and isinstance(parent[last], list):
        parent[last].append(value)
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_values)
def test_random_structures(data: Any) -> None:
    outcome(data)
    outcome({"apiVersion": "kubetide.io/v1alpha1", "kind": "Scenario", "metadata": data, "spec": data})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(_ALL_PATHS), st.sampled_from(["delete", "replace", "add"]), _values),
        min_size=1,
        max_size=3,
    )
)
def test_random_mutations_of_a_valid_scenario(mutations: list[tuple[tuple[Any, ...], str, Any]]) -> None:
    doc = VALID
    for path, action, value in mutations:
        try:
            doc = _mutate(doc, path, action, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the path
    outcome(doc)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_random_text_as_yaml(text: str) -> None:
    with contextlib.suppress(ManifestError):
        outcome(parse_document(text))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=3))
def test_random_overrides(overrides: list[str]) -> None:
    with contextlib.suppress(ManifestError):
        parse_scenario(VALID, base_dir=EXAMPLE.parent, overrides=overrides)


def test_the_example_itself_is_valid() -> None:
    assert isinstance(load_scenario(EXAMPLE), Scenario)


_REFUSED = st.sampled_from([{"bad": [1]}, [[{}]], {"x": {"y": None}}])


def _leaves(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict) and node:
        return [leaf for key, value in node.items() for leaf in _leaves(value, (*prefix, key))]
    if isinstance(node, list) and node:
        return [leaf for i, value in enumerate(node) for leaf in _leaves(value, (*prefix, i))]
    return [prefix]


def _tokens(path: str) -> list[str]:
    # Manifest paths write keys kubectl's way (annotations.kubetide.io/x), ours quote them: compare
    # the pieces.
    return [t for t in re.split(r'[.\[\]"]', path) if t]


def _related(a: str, b: tuple[Any, ...]) -> bool:
    return all(x == y for x, y in zip(_tokens(a), _tokens(".".join(map(str, b))), strict=False))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_a_broken_value_is_reported_alone_though_the_other_checks_still_run(
    document: dict[str, Any], data: st.DataObject
) -> None:
    """A file with a schema problem still gets the cross-section checks (references, times) on the
    rest, and they never blame a sound part for the broken one: every problem is at or around it."""
    document = json.loads(json.dumps(document))  # no shared pieces: break one place only
    where = data.draw(st.sampled_from(_leaves(document["spec"])), label="where")
    broken = _mutate(document, ("spec", *where), "replace", data.draw(_REFUSED))
    result = parse_or_problems(broken)
    if isinstance(result, Scenario):
        return  # a field that takes any structure (free-form maps)
    for problem in result.errors:
        assert _related(problem.path, ("spec", *where)), (problem, where)


def parse_or_problems(document: dict[str, Any]) -> Scenario | ManifestError:
    try:
        return parse_scenario(document, base_dir=DATA_DIR)
    except ManifestError as exc:
        return exc


# Values the loader must refuse cleanly wherever they land (tests/mutations.py's HOSTILE, and more):
# durations past Go's or the simulator's bound, a scan interval too short, names Kubernetes refuses.
_hostile = st.one_of(
    HOSTILE,
    st.sampled_from([-float("inf"), -(2**63) - 1, 2**31, "1e-999999999", "١h", "100000000h", "2000000h"]),
    st.sampled_from(["1ms", "Web_App", "x" * 300, ""]),
    _values,
)


def _mutated(mutations: list[tuple[tuple[Any, ...], str, Any]]) -> dict[str, Any]:
    doc = VALID
    for path, action, value in mutations:
        try:
            doc = _mutate(doc, path, action, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the path
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(_ALL_PATHS), st.sampled_from(["replace", "add"]), _hostile),
        min_size=1,
        max_size=3,
    )
)
def test_hostile_values_anywhere_load_or_are_refused(
    mutations: list[tuple[tuple[Any, ...], str, Any]],
) -> None:
    result = outcome(_mutated(mutations))
    if isinstance(result, Scenario):
        # Whatever loads is within the bounds a run needs to end (sim/scenario/bounds.py).
        assert result.spec.duration <= MAX_DURATION_S


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(_ALL_PATHS), st.sampled_from(["delete", "replace"]), _hostile),
        min_size=1,
        max_size=2,
    )
)
def test_the_validate_command_exits_0_or_2_never_a_traceback(
    tmp_path_factory: pytest.TempPathFactory, mutations: list[tuple[tuple[Any, ...], str, Any]]
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "scenario.yaml"
    path.write_text(yaml.safe_dump(_mutated(mutations), allow_unicode=True))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr


# The sizes a run's length follows (bounded in sim/scenario/bounds.py, tested there): not fuzzed here,
# so each run of the example stays a few seconds.
_RUN_PATHS = [
    p
    for p in _ALL_PATHS
    if not (p and p[-1] in ("duration", "initialSize", "minSize", "maxSize", "replicas"))
]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(_RUN_PATHS), st.sampled_from(["delete", "replace", "add"]), _hostile),
        min_size=1,
        max_size=2,
    )
)
def test_the_simulate_command_runs_or_exits_2_never_a_traceback(
    tmp_path_factory: pytest.TempPathFactory, mutations: list[tuple[tuple[Any, ...], str, Any]]
) -> None:
    """Issue 26: what `validate` accepts, `simulate` runs to the end; what it refuses, `simulate` refuses
    the same way, exit 2 with the field named."""
    where = tmp_path_factory.mktemp("fuzz")
    doc = _mutated(mutations)
    (where / "scenario.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    checked = CliRunner().invoke(main, ["validate", str(where / "scenario.yaml")])
    result = CliRunner().invoke(
        main, ["simulate", str(where / "scenario.yaml"), "--output-dir", str(where / "out"), "--json"]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr
    assert result.exit_code == checked.exit_code, (result.output, checked.output)
    if result.exit_code == 0:
        assert (where / "out" / "summary.json").is_file()
    else:
        assert result.exit_code == 2 and ": invalid scenario (" in result.stderr
