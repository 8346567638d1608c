"""Sweep bench: 64 runs of ``examples/quickstart.yaml`` on this machine's cores, against the ideal.

``SWEEP-64-quickstart``: the wall time of ``kubetide sweep`` (planning, the local process pool, every
run's outputs, sweep.csv/json/html) over 64 runs (a 16-value grid of the HPA tolerance x 4 seeds),
compared with the ideal, 64 x (one run alone, in this process) / workers (budget: within 1.3x).
``overhead_per_run_seconds`` is what the sweep adds per run beyond the runs themselves:
(wall x workers - the sum of the runs' own wall times) / runs (budget 50 ms): starting workers,
sending tasks, saving records, rebuilding the tables, and cores left idle at the end;
``sweep_process_cpu_per_run_seconds`` is the sweep process's own CPU time per run (planning, the
pool, collecting results), which competes with the runs for the cores. ``KUBETIDE_BENCH_SWEEP_RUNS`` sets fewer runs
(a multiple of 4) for a quick look; the default is the 64 the budget is about.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from kubetide.sim.sweep.engine import run_sweep
from kubetide.sim.sweep.executors import default_workers, run_local
from kubetide.sim.sweep.grid import plan_sweep
from kubetide.sim.sweep.page import render_page
from kubetide.sim.sweep.results import write_tables
from kubetide.sim.sweep.run import RunTask, execute

SCENARIO = Path(__file__).resolve().parents[3] / "examples" / "quickstart.yaml"
RATIO_BUDGET = 1.3
OVERHEAD_BUDGET_S = 0.050


def _scenario() -> Path:
    if SCENARIO.is_file():
        return SCENARIO
    raise FileNotFoundError(f"{SCENARIO}: the sweep bench runs from a source checkout")


def run() -> list[dict[str, Any]]:
    runs = int(os.environ.get("KUBETIDE_BENCH_SWEEP_RUNS", "64"))
    seeds = 4
    tolerances = ",".join(f"{0.02 + 0.01 * i:.2f}" for i in range(max(runs // seeds, 1)))
    workers = default_workers()
    scenario = _scenario()
    with tempfile.TemporaryDirectory(prefix="kubetide-bench-sweep-") as tmp:
        one = execute(RunTask("one", str(scenario), (), {}, 42, str(Path(tmp) / "one")))
        assert one.ok, one.record.get("error")
        single = float(one.record["wall_seconds"])
        start, cpu_start = time.perf_counter(), time.process_time()
        plan = plan_sweep(scenario, [f"spec.autoscalers.hpa.tolerance={tolerances}"], seeds)
        outcome = run_sweep(plan, Path(tmp) / "sweep", lambda tasks, done: run_local(tasks, done, workers))
        keys = [axis.key for axis in plan.axes]
        write_tables(Path(tmp) / "sweep", outcome.rows, keys)
        (Path(tmp) / "sweep" / "sweep.html").write_text(render_page("bench", outcome.rows, keys, plan.seeds))
        wall, parent_cpu = time.perf_counter() - start, time.process_time() - cpu_start
        own = sum(
            float(json.loads((Path(tmp) / "sweep" / r.path / "result.json").read_text())["wall_seconds"])
            for r in outcome.rows
        )
    count = len(plan.runs)
    ideal = count * single / workers
    return [
        {
            "workload": f"SWEEP-{count}-quickstart",
            "median_seconds": wall,
            "runs": 1,
            "target_seconds": ideal * RATIO_BUDGET,
            "sweep_runs": count,
            "workers": workers,
            "one_run_seconds": round(single, 3),
            "ideal_seconds": round(ideal, 2),
            "ratio_to_ideal": round(wall / ideal, 3),
            "overhead_per_run_seconds": round(max(wall * workers - own, 0.0) / count, 4),
            "sweep_process_cpu_per_run_seconds": round(parent_cpu / count, 4),
            "overhead_budget_seconds": OVERHEAD_BUDGET_S,
            "failed": sum(1 for r in outcome.rows if not r.ok),
        }
    ]
