"""``kubetide compare A B``: two runs (output directories or scenarios) on one page, with the summary
figures' differences and the plots overlaid; bad input exits 2 naming it."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kubetide.cli import main
from kubetide.sim.output.compare import Run, figures, load_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def short_scenario(tmp_path: Path) -> Path:
    """The minimal example, 2 hours: quick enough to simulate twice in a test."""
    data = yaml.safe_load((EXAMPLES / "scenario-minimal.yaml").read_text())
    data["spec"]["duration"] = "2h"
    data["spec"]["actions"] = []
    for group in data["spec"]["nodeGroups"]:
        group.pop("faults", None)
    for t in data["spec"].get("traffic") or []:
        t["rps"] = {"type": "constant", "value": 300}
    path = tmp_path / "short.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_two_output_directories_compare_with_their_differences(tmp_path: Path) -> None:
    scenario = short_scenario(tmp_path)
    for name, tolerance in (("a", "0.1"), ("b", "0.5")):
        code, _, err = run(
            "simulate", str(scenario), "--output-dir", str(tmp_path / name),
            "--set", f"spec.autoscalers.hpa.flags.horizontal-pod-autoscaler-tolerance={tolerance}",
        )  # fmt: skip
        assert code == 0, err
    a, b = load_run(tmp_path / "a"), load_run(tmp_path / "b")
    rows = {label: (va, vb) for label, va, vb, _ in figures(a, b)}
    assert rows["cost ($)"] == (a.summary["nodes"]["cost"], b.summary["nodes"]["cost"])
    assert rows["HPA rescales"] == (
        a.summary["autoscalers"]["hpa"]["rescales"],
        b.summary["autoscalers"]["hpa"]["rescales"],
    )
    out = tmp_path / "cmp.html"
    code, stdout, _ = run("compare", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(out))
    assert code == 0 and f"Comparison: {out}" in stdout
    html = out.read_text()
    assert html.count("<svg") >= 4 and "B − A" in html and "A nodes" in html and "B nodes" in html
    assert "http" not in html.split("</head>")[0].replace("http-equiv", "")


def test_a_scenario_is_simulated_with_its_own_overrides(tmp_path: Path) -> None:
    scenario = short_scenario(tmp_path)
    out = tmp_path / "cmp.html"
    code, _, err = run(
        "compare", str(scenario), str(scenario), "-o", str(out),
        "--set-b", "spec.autoscalers.hpa.flags.horizontal-pod-autoscaler-tolerance=0.5",
    )  # fmt: skip
    assert code == 0, err
    html = out.read_text()
    assert "horizontal-pod-autoscaler-tolerance=0.5" in html  # B is named with its override
    assert "the most pending within each step" in html


def test_bad_inputs_exit_2_naming_them(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run("compare", str(empty), str(empty))
    assert code == 2 and "not a kubetide output directory" in err
    code, _, err = run("compare", str(empty), str(empty), "--set-a", "x=1")
    assert code == 2 and "--set-a: only applies to a scenario" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubetide.io/v1alpha1\nkind: Scenario\nspec: {duration: 0}\n")
    code, _, err = run("compare", str(bad), str(bad))
    assert code == 2 and "bad.yaml" in err and "spec.duration" in err


def test_figures_only_list_what_either_run_has() -> None:
    a = Run("a", {"nodes": {"cost": 2.0}}, {})
    b = Run("b", {"nodes": {"cost": 3.0}, "pods": {"max_pending": 4}}, {})
    assert figures(a, b) == [("cost ($)", 2.0, 3.0, True), ("max pending pods", None, 4.0, True)]
