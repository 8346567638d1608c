"""``kubetide simulate`` end to end: the examples run, outputs follow the contract, bad input exits 2."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubetide.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_quickstart_writes_the_four_outputs(tmp_path: Path) -> None:
    code, out, _ = run("simulate", str(EXAMPLES / "quickstart.yaml"), "--output-dir", str(tmp_path))
    assert code == 0, out
    assert "Report:" in out and "Deployment/shop/web" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["scenario"] == "quickstart" and summary["simulated_seconds"] == 86400
    web = summary["workloads"]["Deployment/shop/web"]
    assert web["max_replicas"] > web["min_replicas"] >= 3  # the HPA followed the daily curve
    assert summary["autoscalers"]["hpa"]["rescales"] > 0
    with (tmp_path / "timeline.csv").open() as f:
        rows = list(csv.reader(f))
    header = rows[0]
    assert header[:5] == ["t", "nodes:general", "target:general", "nodes:compute", "target:compute"]
    assert header[-2:] == ["pending_pods", "cost_per_hour"]
    assert len(rows) - 1 == 86400 // 15 + 1  # one row per resolution step, both ends included
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["t"] for e in events] == sorted(e["t"] for e in events)
    rescale = next(e for e in events if e["reason"] == "SuccessfulRescale")
    assert rescale["source"] == "hpa" and rescale["message"].startswith("New size: ")
    assert set(rescale["data"]) == {"from", "to"}
    html = (tmp_path / "report.html").read_text()
    assert "<svg" in html and "http://" not in html.split("</head>")[0]
    # Both autoscalers act in the quickstart, and their decisions are on the time axis.
    assert summary["autoscalers"]["cluster-autoscaler"]["scale_ups"] >= 1
    assert summary["autoscalers"]["cluster-autoscaler"]["nodes_removed"] >= 1
    assert html.count('class="marker decision"') >= summary["autoscalers"]["hpa"]["rescales"]
    assert 'id="chart-requests"' in html and "most pending in the step" in html
    assert 'id="chart-jobs"' not in html  # no Job in the quickstart: no empty plot


def test_json_prints_exactly_the_summary(tmp_path: Path) -> None:
    code, out, _ = run("simulate", str(EXAMPLES / "quickstart.yaml"), "--json", "--output-dir", str(tmp_path))
    assert code == 0
    assert json.loads(out) == json.loads((tmp_path / "summary.json").read_text())


def test_same_seed_same_result_and_seed_override(tmp_path: Path) -> None:
    def summary(*extra: str) -> dict[str, object]:
        code, out, _ = run(
            "simulate", str(EXAMPLES / "quickstart.yaml"), "--json", "--output-dir", str(tmp_path), *extra
        )
        assert code == 0
        data: dict[str, object] = json.loads(out)
        data.pop("wall_seconds")
        data.pop("simulated_seconds_per_wall_second")
        return data

    assert summary() == summary()
    assert summary("--seed", "7")["seed"] == 7


def test_set_overrides_a_field(tmp_path: Path) -> None:
    code, out, _ = run(
        "simulate",
        str(EXAMPLES / "quickstart.yaml"),
        "--json",
        "--output-dir",
        str(tmp_path),
        "--set",
        "spec.duration=20h",
    )
    assert code == 0 and json.loads(out)["simulated_seconds"] == 72000
    code, _, err = run("simulate", str(EXAMPLES / "quickstart.yaml"), "--set", "spec.duration=1h")
    assert code == 2 and "spec.actions[0].at: must be within the simulation (0..1h), got 18h" in err


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("spec.nodeGroups[0].maxSize=1", "spec.nodeGroups[0].maxSize: must be >= minSize (got 1 < 2)"),
        ("spec.nodeGroups[1].instanceType=m9.huge", "spec.nodeGroups[1].instanceType"),
        ("spec.autoscalers.escalator.enabled=true", "escalator"),
    ],
)
def test_bad_scenarios_exit_2_naming_the_field(tmp_path: Path, override: str, message: str) -> None:
    code, _, err = run(
        "simulate", str(EXAMPLES / "quickstart.yaml"), "--output-dir", str(tmp_path), "--set", override
    )
    assert code == 2
    assert message in err


def _events(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "events.jsonl").read_text().splitlines()]


def test_minimal_example_simulates_with_the_cluster_autoscaler(tmp_path: Path) -> None:
    code, _, _ = run("validate", str(EXAMPLES / "scenario-minimal.yaml"))
    assert code == 0
    code, out, _ = run("simulate", str(EXAMPLES / "scenario-minimal.yaml"), "--output-dir", str(tmp_path))
    assert code == 0, out
    ca = json.loads((tmp_path / "summary.json").read_text())["autoscalers"]["cluster-autoscaler"]
    assert ca["scale_ups"] > 0 and ca["nodes_added"] >= ca["scale_ups"]
    assert ca["scale_downs"] > 0 and ca["nodes_removed"] > 0
    # The never-registering instance and the deleted Node; the one whose Node has no providerID is matched
    # to its Node by address and kept (issue 8 item 1).
    assert ca["unregistered_removed"] >= 2
    assert ca["failed_scale_ups"] >= 2 and ca["backoffs"] >= 2  # the stockout and the API errors
    events = [e for e in _events(tmp_path) if e["source"] == "cluster-autoscaler"]
    by_reason: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_reason.setdefault(e["reason"], []).append(e)
    scaled = by_reason["ScaledUpGroup"][0]
    assert set(scaled["data"]) == {"group", "from", "to"}
    assert {"groups"} <= set(by_reason["TriggeredScaleUp"][0]["data"])
    assert set(by_reason["DeleteUnregistered"][0]["data"]) == {"group", "instance"}
    assert set(by_reason["NodeWithoutProviderID"][0]["data"]) == {"node", "group", "instance"}
    # The stockout (1h-2h, error mode) fails the spot-a scale-up at once, backs the group off, and the
    # same loop scales the other group instead of waiting for max-node-provision-time.
    failed = next(e for e in by_reason["ScaleUpFailed"] if e["data"]["group"] == "spot-a")
    assert 3600 <= failed["t"] < 7200 and "OutOfResource.STOCKOUT" in failed["message"]
    backoff = next(e for e in by_reason["NodeGroupBackoff"] if e["t"] == failed["t"])
    assert backoff["data"]["group"] == "spot-a" and backoff["data"]["until"] > failed["t"]
    failover = next(e for e in by_reason["ScaledUpGroup"] if e["t"] >= failed["t"])
    assert failover["data"]["group"] == "general" and failover["t"] - failed["t"] <= 60
    assert by_reason["DeleteCreatedWithError"][0]["data"]["group"] == "spot-a"
    # API errors on IncreaseSize (3h-3h10m) fail over too.
    api = next(e for e in by_reason["FailedToScaleUpGroup"] if e["data"]["group"] == "spot-a")
    assert 10800 <= api["t"] < 11400
    mismatch = by_reason["NodeTemplateMismatch"][0]
    assert set(mismatch["data"]) == {"group", "resource", "template", "observed"}


def test_the_minimal_example_runs_the_batch_autoscaler_beside_the_cluster_autoscaler(tmp_path: Path) -> None:
    code, out, err = run(
        "simulate",
        str(EXAMPLES / "scenario-minimal.yaml"),
        "--json",
        "--output-dir",
        str(tmp_path),
        "--set",
        "spec.autoscalers.escalator.enabled=true",
    )
    assert code == 0, err
    escalator = json.loads(out)["autoscalers"]["escalator"]
    assert escalator["loops"] > 0 and escalator["by_group"]["batch"]["nodes_removed"] >= 0
    # CA left Escalator's group (spot-a) alone: every spot-a change is Escalator's.
    ca_groups = {
        e["data"].get("group")
        for e in _events(tmp_path)
        if e["source"] == "cluster-autoscaler"
        and e["reason"] in ("ScaledUpGroup", "ScaleDown", "ScaleDownEmpty")
    }
    assert "spot-a" not in ca_groups


def test_cluster_autoscaler_example_scales_up_fails_over_and_scales_down(tmp_path: Path) -> None:
    code, out, _ = run("simulate", str(EXAMPLES / "cluster-autoscaler.yaml"), "--output-dir", str(tmp_path))
    assert code == 0, out
    summary = json.loads((tmp_path / "summary.json").read_text())
    ca = summary["autoscalers"]["cluster-autoscaler"]
    assert ca["scale_ups"] >= 3 and ca["scale_downs"] >= 1 and ca["nodes_removed"] >= 1
    assert ca["failed_scale_ups"] >= 1 and ca["backoffs"] >= 1
    groups = summary["nodes"]["by_group"]
    assert groups["spot"]["max"] >= 2 and groups["on-demand"]["max"] > 2  # both groups grew
    assert summary["pods"]["unschedulable_at_end"] == 0
    events = [e for e in _events(tmp_path) if e["source"] == "cluster-autoscaler"]
    failed = next(e for e in events if e["reason"] == "ScaleUpFailed")
    assert failed["data"]["group"] == "spot" and 36000 <= failed["t"] < 43200  # the stockout window
    failover = next(e for e in events if e["reason"] == "ScaledUpGroup" and e["t"] >= failed["t"])
    assert failover["data"]["group"] == "on-demand" and failover["t"] - failed["t"] <= 60
    assert any(e["reason"] in ("ScaleDown", "ScaleDownEmpty") and e["t"] > 14 * 3600 for e in events)


def _scenario(tmp_path: Path, spec: dict[str, object]) -> str:
    path = tmp_path / "s.json"
    doc = {"apiVersion": "kubetide.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "s"}, "spec": spec}
    path.write_text(json.dumps(doc))
    return str(path)


def test_a_missing_csv_file_is_an_invalid_scenario(tmp_path: Path) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}},
        },
    }
    traffic = {"target": "Deployment/web", "rps": {"type": "csv", "path": "gone.csv", "column": "rps"}}
    path = _scenario(tmp_path, {"duration": "1h", "objects": [deployment], "traffic": [traffic]})
    code, _, err = run("simulate", path, "--output-dir", str(tmp_path / "out"))
    assert code == 2 and "spec.traffic[0].rps.path: cannot read" in err


@pytest.mark.parametrize("spec", [{"duration": "1h"}, {"duration": "1h", "nodeGroups": [], "objects": []}])
def test_an_empty_cluster_simulates(tmp_path: Path, spec: dict[str, object]) -> None:
    code, out, _ = run("simulate", _scenario(tmp_path, spec), "--output-dir", str(tmp_path / "out"), "--json")
    assert code == 0 and json.loads(out)["nodes"]["final"] == 0


def test_a_negative_seed_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run("simulate", _scenario(tmp_path, {"duration": "1h"}), "--seed", "-1")
    assert code == 2 and "--seed" in err


def test_an_output_directory_that_cannot_be_made_exits_1_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "out"
    code, _, err = run("simulate", _scenario(tmp_path, {"duration": "1h"}), "--output-dir", str(out))
    assert code == 1 and "cannot write the outputs" in err
