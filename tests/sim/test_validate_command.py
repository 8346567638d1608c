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


def test_the_batch_example_validates_and_bad_escalator_groups_exit_2_with_every_problem(
    tmp_path: Path,
) -> None:
    example = EXAMPLE.parent / "escalator-batch.yaml"
    code, out, _ = run(str(example))
    assert code == 0 and "autoscalers: hpa, cluster-autoscaler, escalator" in out
    data = yaml.safe_load(example.read_text())
    group = data["spec"]["autoscalers"]["escalator"]["nodeGroups"][0]
    group.update(min_nodes=40, soft_delete_grace_period="forever", label_value="", thresholds=1)
    data["spec"]["autoscalers"]["clusterAutoscaler"]["flags"]["nodes"] = ["1:6:services", "1:30:batch"]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    code, out, err = run(str(path))
    assert code == 2 and out == "" and "Traceback" not in err
    at = "spec.autoscalers.escalator.nodeGroups[0]"
    for line in (
        f"{at}.label_value: label_value cannot be empty",
        f"{at}.min_nodes: min_nodes must be less than max_nodes",
        f"{at}.soft_delete_grace_period: soft_delete_grace_period failed to parse into a time.Duration.",
        f"{at}.thresholds: unknown Escalator node group key",
    ):
        assert line in err
    assert "invalid scenario (4 problems)" in err
    # Checks across sections run once every section is valid on its own: then the overlap is named.
    good = yaml.safe_load(example.read_text())["spec"]["autoscalers"]["escalator"]["nodeGroups"][0]
    data["spec"]["autoscalers"]["escalator"]["nodeGroups"][0] = good
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    code, _, err = run(str(path))
    assert code == 2 and "Traceback" not in err and "invalid scenario (1 problem)" in err
    assert (
        "spec.autoscalers.clusterAutoscaler.flags.nodes[1]: node group 'batch' is managed by the batch "
        f"autoscaler ({at}.cloud_provider_group_name)" in err
    )


def test_skipped_kinds_are_noted_on_stderr(tmp_path: Path) -> None:
    data = doc()
    data["spec"]["objects"].append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}})
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    code, out, err = run(str(path))
    assert code == 0 and "OK: scenario" in out
    assert (
        f"note: {path}: spec.objects[1]: Service 'web' skipped (the simulator does not model Service objects)"
        in err
    )
