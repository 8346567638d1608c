"""``kubetide validate``: a summary and exit 0, or every problem and exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner
from scenario_builders import doc

from kubetide.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenario-minimal.yaml"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["validate", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_valid_scenario_prints_a_summary() -> None:
    code, out, _ = run(str(EXAMPLE))
    assert code == 0
    assert "OK: scenario 'minimal', 6h simulated, seed 42" in out
    assert "node groups: general, spot-a" in out
    assert "autoscalers: hpa, cluster-autoscaler" in out


def test_invalid_scenario_lists_every_problem_and_exits_2(tmp_path: Path) -> None:
    data = doc()
    data["spec"]["nodeGroups"][1].update(minSize=2, maxSize=0)
    data["spec"]["seed"] = "x"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    code, out, err = run(str(path))
    assert code == 2 and out == ""
    assert "invalid scenario (2 problems)" in err
    assert "  spec.seed: must be an integer, got 'x'" in err
    assert "  spec.nodeGroups[1].maxSize: must be >= minSize (got 0 < 2)" in err


def test_set_overrides_are_applied(tmp_path: Path) -> None:
    code, _, err = run(str(EXAMPLE), "--set", "spec.nodeGroups[0].maxSize=0")
    assert code == 2 and "spec.nodeGroups[0].maxSize: must be >= minSize (got 0 < 1)" in err


def test_unreadable_inputs_exit_2_with_a_message(tmp_path: Path) -> None:
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    for path in (tmp_path / "missing.yaml", binary, tmp_path):
        code, _, err = run(str(path))
        assert code == 2
        assert "Traceback" not in err
