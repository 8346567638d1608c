"""``kubetide hpa explain``: the example explains itself, bad snapshots exit 2 naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetide.cli import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "hpa-explain.yaml"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_example_explains_the_decision() -> None:
    code, out, _ = run("hpa", "explain", str(EXAMPLE))
    assert code == 0
    assert "Decision: scale 4 -> 5" in out
    assert "1 unready" in out  # the pod still in its cpu initialization window


def test_json_output_is_machine_readable() -> None:
    code, out, _ = run("hpa", "explain", str(EXAMPLE), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["desired_replicas"] == 5 and report["scaled"] is True
    assert [m["proposal"] for m in report["metrics"]] == [5, 4]
    assert report["normalization"]["limit"] == "DesiredWithinRange"


def test_bad_field_exits_2_with_its_path(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["hpa"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = "sixty"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    code, _, err = run("hpa", "explain", str(bad))
    assert code == 2
    assert "hpa.spec.metrics[0].resource.target.averageUtilization: must be an integer" in err


def test_invalid_yaml_and_missing_file_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("hpa: [unclosed")
    code, _, err = run("hpa", "explain", str(bad))
    assert code == 2 and "not valid YAML" in err
    code, _, err = run("hpa", "explain", str(tmp_path / "missing.yaml"))
    assert code == 2 and "cannot read" in err


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4), st.floats(allow_nan=False)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    path=st.lists(
        st.sampled_from(["hpa", "spec", "scale", "pods", "metrics", 0, "status", "config"]),
        min_size=1,
        max_size=4,
    ),
    value=values,
)
def test_mutated_snapshots_never_crash(tmp_path: Path, path: list[object], value: object) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    node = data
    for key in path[:-1]:
        node = (
            node.get(key)
            if isinstance(node, dict)
            else (node[key] if isinstance(node, list) and isinstance(key, int) and key < len(node) else None)
        )
        if node is None:
            return
    last = path[-1]
    if isinstance(node, dict) or (isinstance(node, list) and isinstance(last, int) and last < len(node)):
        node[last] = value
    else:
        return
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(main, ["hpa", "explain", str(f)])
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
