"""`kubetide sweep`: the grid and its checks, runs equal to `simulate`, resuming without redoing, failed
runs recorded, the three outputs, and the Pareto ranking against a plain reference."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from kubetide.cli import main
from kubetide.model.errors import ManifestError
from kubetide.sim.sweep import run as run_module
from kubetide.sim.sweep.engine import run_sweep
from kubetide.sim.sweep.executors import Done, run_serial
from kubetide.sim.sweep.grid import parse_grid, plan_sweep
from kubetide.sim.sweep.pareto import pareto_front, pareto_layers
from kubetide.sim.sweep.run import RunTask

TOLERANCE = "spec.autoscalers.hpa.tolerance"
MAX_SIZE = "spec.nodeGroups[0].maxSize"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output + result.stderr, result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


# ------------------------------------------------------------------------------------------ the grid
def test_values_split_at_commas_or_come_as_a_json_list() -> None:
    axes = parse_grid([f"{TOLERANCE}=0.05,0.1", 'metadata.name=["a,b","c"]', f"{MAX_SIZE}=[3, 4]"])
    assert [a.values for a in axes] == [(0.05, 0.1), ("a,b", "c"), (3, 4)]


def test_runs_are_the_product_of_the_grids_times_the_seeds(tiny: Path) -> None:
    plan = plan_sweep(tiny, [f"{TOLERANCE}=0.05,0.1,0.2", f"{MAX_SIZE}=3,6"], seeds=2)
    assert plan.seeds == (7, 8)  # the scenario's seed + 0..N-1
    assert len(plan.runs) == 3 * 2 * 2
    assert len({run.key for run in plan.runs}) == 12
    assert plan.runs[0].overrides == (f"{TOLERANCE}=0.05", f"{MAX_SIZE}=3")


def test_every_grid_problem_is_named_with_its_entry_before_anything_runs(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = cli(
        "sweep",
        str(tiny),
        "--grid",
        "spec.nodeGroups[0].maxSise=3,4",
        "--grid",
        f"{TOLERANCE}=0.1,,0.2",
        "--grid",
        f"{MAX_SIZE}=3,-1",
        "--grid",
        "nonsense",
        "--seeds",
        "0",
        "--output-dir",
        str(out),
    )
    assert code == 2, err
    assert "invalid sweep (5 problems)" in err
    assert "--grid spec.nodeGroups[0].maxSise=3,4" in err and "maxSise" in err
    assert f"--grid {TOLERANCE}=0.1,,0.2: an empty value" in err
    assert f"--grid {MAX_SIZE}=3,-1: value '-1'" in err
    assert "--grid nonsense: expected KEY=V1,V2,..." in err
    assert "--seeds: must be at least 1, got 0" in err
    assert not out.exists()  # nothing ran, nothing written


def test_a_combination_the_scenario_rejects_is_named(tiny: Path) -> None:
    with pytest.raises(ManifestError) as exc:
        plan_sweep(tiny, ["spec.nodeGroups[0].minSize=0,5", f"{MAX_SIZE}=3,6"], seeds=1)
    (problem,) = exc.value.errors
    assert "--grid combination spec.nodeGroups[0].minSize=5, spec.nodeGroups[0].maxSize=3" in str(problem)


def test_a_key_swept_twice_and_the_seed_are_refused(tiny: Path) -> None:
    with pytest.raises(ManifestError) as exc:
        plan_sweep(tiny, [f"{MAX_SIZE}=3", f"{MAX_SIZE}=4", "spec.seed=1,2"], seeds=1)
    text = "\n".join(str(e) for e in exc.value.errors)
    assert "already swept" in text and "--seeds N" in text


# ------------------------------------------------------------------------------------------ running
def test_a_run_is_exactly_simulate_with_those_settings_and_seed(tiny: Path, tmp_path: Path) -> None:
    code, _, err = cli(
        "sweep", str(tiny), "--grid", f"{TOLERANCE}=0.05,0.2", "--seeds", "2", "--workers", "2",
        "--output-dir", str(tmp_path / "sw"),
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    assert [(r["settings"], r["seed"]) for r in rows] == [
        ({TOLERANCE: 0.05}, 7), ({TOLERANCE: 0.05}, 8), ({TOLERANCE: 0.2}, 7), ({TOLERANCE: 0.2}, 8),
    ]  # fmt: skip
    row = rows[3]
    code, _, err = cli(
        "simulate",
        str(tiny),
        "--set",
        f"{TOLERANCE}=0.2",
        "--seed",
        "8",
        "--output-dir",
        str(tmp_path / "one"),
    )
    assert code == 0, err
    alone = json.loads((tmp_path / "one" / "summary.json").read_text())
    in_sweep = json.loads((tmp_path / "sw" / row["run"] / "summary.json").read_text())
    for summary in (alone, in_sweep, row["summary"]):
        summary.pop("wall_seconds")
        summary.pop("simulated_seconds_per_wall_second", None)
    assert row["summary"] == in_sweep == alone


def _interrupt_after(count: int) -> Any:
    def runner(tasks: Sequence[RunTask], done: Done) -> None:
        for k, task in enumerate(tasks):
            if k == count:
                raise KeyboardInterrupt
            done(run_module.execute(task))

    return runner


def test_an_interrupted_sweep_resumes_without_redoing_finished_runs(tiny: Path, tmp_path: Path) -> None:
    plan = plan_sweep(tiny, [f"{MAX_SIZE}=3,4,6"], seeds=2)
    out = tmp_path / "sw"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan, out, _interrupt_after(4))
    finished = sorted(p.parent.name for p in out.glob("runs/*/result.json"))
    assert len(finished) == 4
    before = {key: (out / "runs" / key / "summary.json").stat().st_mtime_ns for key in finished}
    ran: list[str] = []

    def counting(tasks: Sequence[RunTask], done: Done) -> None:
        ran.extend(task.key for task in tasks)
        run_serial(tasks, done)

    outcome = run_sweep(plan, out, counting)
    assert outcome.reused == 4 and outcome.ran == 2 and len(ran) == 2
    assert not set(ran) & set(finished)
    assert len(outcome.rows) == 6 and all(row.ok for row in outcome.rows)
    assert {key: (out / "runs" / key / "summary.json").stat().st_mtime_ns for key in finished} == before


def test_a_half_written_run_is_run_again(tiny: Path, tmp_path: Path) -> None:
    """A run whose outputs exist but whose record does not (killed while writing) is not finished."""
    plan = plan_sweep(tiny, [f"{MAX_SIZE}=3,4"], seeds=1)
    out = tmp_path / "sw"
    run_sweep(plan, out, run_serial)
    (out / "runs" / plan.runs[1].key / "result.json").unlink()
    outcome = run_sweep(plan, out, run_serial)
    assert outcome.reused == 1 and outcome.ran == 1


def test_a_failing_run_is_recorded_and_the_others_complete(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = run_module._simulate

    def flaky(task: RunTask, directory: Path) -> dict[str, Any]:
        if task.settings[MAX_SIZE] == 4:
            raise RuntimeError("the simulated disk is on fire")
        return original(task, directory)

    monkeypatch.setattr(run_module, "_simulate", flaky)
    out = tmp_path / "sw"
    code, stdout, err = cli(
        "sweep", str(tiny), "--grid", f"{MAX_SIZE}=3,4,6", "--workers", "1", "--output-dir", str(out)
    )
    assert code == 1
    assert (
        "run failed: spec.nodeGroups[0].maxSize=4, seed 7: RuntimeError: the simulated disk is on fire" in err
    )
    assert "3 runs: 2 ok, 1 failed" in stdout
    rows = json.loads((out / "sweep.json").read_text())
    assert [r["error"] for r in rows] == [None, "RuntimeError: the simulated disk is on fire", None]
    assert rows[1]["summary"] is None and rows[0]["summary"] is not None
    csv_lines = (out / "sweep.csv").read_text().splitlines()
    assert csv_lines[2].endswith("RuntimeError: the simulated disk is on fire")
    assert "failed: RuntimeError: the simulated disk is on fire" in (out / "sweep.html").read_text()
    # Fixed, the same command runs just the failed run.
    monkeypatch.setattr(run_module, "_simulate", original)
    code, stdout, err = cli(
        "sweep", str(tiny), "--grid", f"{MAX_SIZE}=3,4,6", "--workers", "1", "--output-dir", str(out)
    )
    assert code == 0, err
    assert "3 runs: 3 ok, 0 failed, 2 from an earlier invocation" in stdout


def test_a_directory_of_another_scenario_is_refused(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "sw"
    assert cli("sweep", str(tiny), "--grid", f"{MAX_SIZE}=3", "--output-dir", str(out))[0] == 0
    tiny.write_text(tiny.read_text().replace("duration: 40m", "duration: 30m"))
    code, _, err = cli("sweep", str(tiny), "--grid", f"{MAX_SIZE}=3", "--output-dir", str(out))
    assert code == 2 and "holds runs of another scenario content" in err


# ------------------------------------------------------------------------------------------ outputs
def test_the_three_outputs_and_the_page_links_every_run_to_its_report(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "sw"
    code, stdout, err = cli(
        "sweep", str(tiny), "--grid", f"{TOLERANCE}=0.05,0.3", "--grid", f"{MAX_SIZE}=3,6",
        "--workers", "2", "--output-dir", str(out),
    )  # fmt: skip
    assert code == 0, err
    assert "#1 front 1:" in stdout
    header = (out / "sweep.csv").read_text().splitlines()[0]
    assert header == (
        f"{TOLERANCE},{MAX_SIZE},seed,cost,pending_pod_seconds,time_to_schedule_p95,overloaded_seconds,"
        "node_hours,actions,run,error"
    )
    rows = json.loads((out / "sweep.json").read_text())
    assert len(rows) == 4 and set(rows[0]) >= {"settings", "seed", "summary"}
    page = (out / "sweep.html").read_text()
    for row in rows:
        link = f"{row['run']}/report.html"
        assert f'href="{link}"' in page and (out / link).is_file()
    assert "Pareto front" in page and "Per-setting effects" in page and "Runs ranked" in page
    assert page.count("<tr") >= 4 + 1 + 2 * 3  # ranked runs + header, and two effects tables


# ------------------------------------------------------------------------------------------ Pareto
def _dominated(p: tuple[float, float], q: tuple[float, float]) -> bool:
    return q[0] <= p[0] and q[1] <= p[1] and q != p


points = st.lists(st.tuples(st.integers(0, 8).map(float), st.integers(0, 8).map(float)), max_size=30)


@given(points)
def test_front_is_exactly_the_undominated_points(pts: list[tuple[float, float]]) -> None:
    expected = {i for i, p in enumerate(pts) if not any(_dominated(p, q) for q in pts)}
    assert set(pareto_front(pts)) == expected


@given(points)
def test_layers_peel_fronts_off_one_after_another(pts: list[tuple[float, float]]) -> None:
    layers = pareto_layers(pts)
    remaining = set(range(len(pts)))
    depth = 0
    while remaining:
        depth += 1
        front = {i for i in remaining if not any(_dominated(pts[i], pts[j]) for j in remaining)}
        assert {i for i in remaining if layers[i] == depth} == front
        remaining -= front


def test_ctrl_c_keeps_what_finished_and_says_how_to_resume(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubetide.commands import sweep as sweep_command

    def interrupted(tasks: Sequence[RunTask], done: Done, workers: int) -> None:
        done(run_module.execute(tasks[0]))
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_command, "run_local", interrupted)
    out = tmp_path / "sw"
    code, _, err = cli("sweep", str(tiny), "--grid", f"{MAX_SIZE}=3,4,6", "--output-dir", str(out))
    assert code == 130
    assert "interrupted: 1 of 3 runs done (0 failed); run the same command to finish the rest" in err
    assert len(json.loads((out / "sweep.json").read_text())) == 1  # the tables hold what finished


def test_progress_shows_runs_done_failed_and_time_left() -> None:
    from kubetide.sim.sweep.progress import SweepProgress

    progress = SweepProgress(10, already=2, enabled=False)
    progress.done = 2
    for ok in (True, False, True, True):
        progress.update(ok)
    line = progress.render(wall_elapsed=40.0, columns=120)
    # 4 runs took 40 s in this invocation: 4 left take about 40 s more (earlier runs do not count).
    assert "6/10 runs, 1 failed" in line and "60.0%" in line and "ETA 0:00:40" in line
