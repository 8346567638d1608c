"""``kubetide sweep SCENARIO --grid KEY=V1,V2 ...``: run a scenario over a grid of settings and seeds,
rank the outcomes and show the trade-off.

Exit codes: 0 every run succeeded; 1 some run failed (each is recorded with its error, the others ran);
2 a bad scenario, grid or option (every problem named, nothing run); 130 interrupted (what finished is
kept: the same command runs only what is missing).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from kubetide.model.errors import ManifestError
from kubetide.sim.sweep.engine import Runner, SweepOutcome, run_sweep, tasks_of
from kubetide.sim.sweep.executors import Done, default_workers, run_local
from kubetide.sim.sweep.grid import SweepPlan, plan_sweep
from kubetide.sim.sweep.page import rank, render_page
from kubetide.sim.sweep.progress import SweepProgress
from kubetide.sim.sweep.results import Row, rows_of, write_tables
from kubetide.sim.sweep.run import RunResult, RunTask, write_atomic
from kubetide.sim.sweep.store import ScenarioMismatch, SweepStore

EXIT_FAILED_RUNS = 1
EXIT_INVALID = 2
EXIT_INTERRUPTED = 130


@click.command(short_help="Run a scenario over a grid of settings and seeds; rank the outcomes.")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option(
    "--grid",
    "grid",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="A field to sweep and its values, KEY a --set path of `simulate` "
    "(e.g. spec.autoscalers.hpa.tolerance=0.05,0.1). Values holding commas: a JSON list, "
    'KEY=\'["a,b","c"]\'. Repeat for more fields: the runs are every combination.',
)
@click.option(
    "--seeds",
    type=int,
    default=1,
    show_default=True,
    help="Seeds per combination: the scenario's spec.seed + 0..N-1.",
)
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where sweep.csv, sweep.json, sweep.html and runs/<run>/ go "
    "[default: ./kubetide-sweeps/<metadata.name>]. Running again with the same arguments resumes.",
)
@click.option(
    "--workers",
    type=int,
    default=None,
    help="Runs at once on this machine [default: the cores this process may use].",
)
@click.option(
    "--dask-scheduler",
    metavar="ADDRESS",
    default=None,
    help="Run on an existing Dask distributed cluster (tcp://host:8786) instead of locally. "
    "Needs pip install 'kubetide[dask]'; its workers need kubetide and the scenario file at the same path.",
)
def sweep(
    scenario: str,
    grid: tuple[str, ...],
    seeds: int,
    output_dir: Path | None,
    workers: int | None,
    dask_scheduler: str | None,
) -> None:
    """Run SCENARIO once per combination of the --grid values and per seed, each run exactly
    `kubetide simulate SCENARIO --set KEY=VALUE ... --seed S`, in parallel.

    \b
    Writes to the output directory:
      sweep.csv    one row per run: the settings, the seed, cost, pending pod-seconds, time to
                   schedule p95, overloaded seconds, node-hours, autoscaler actions
      sweep.json   one row per run: {settings, seed, summary} (summary as the run's summary.json)
      sweep.html   the runs ranked, per-setting effects, cost against pending time with the
                   Pareto front; every point links to its run's report
      runs/<run>/  each run's own outputs (report.html, summary.json, ...)

    Each finished run is written at once. Interrupted (Ctrl-C, a lost worker), the same command
    runs only what is missing; a failed run is recorded with its error and runs again next time.

    \b
    Example:
      kubetide sweep examples/quickstart.yaml --grid spec.autoscalers.hpa.tolerance=0.05,0.1,0.2 --seeds 3
    """
    problems: list[str] = []
    if workers is not None and workers < 1:
        problems.append(f"--workers: must be at least 1, got {workers}")
    if workers is not None and dask_scheduler is not None:
        problems.append("--workers: not with --dask-scheduler (the Dask cluster has its own workers)")
    try:
        plan = plan_sweep(scenario, grid, seeds)
    except ManifestError as exc:
        problems += [str(problem) for problem in exc.errors]
        plan = None
    except OSError as exc:
        problems.append(f"{scenario}: cannot read: {exc.strerror or exc}")
        plan = None
    if problems or plan is None:
        _invalid(scenario, problems)
        return
    if dask_scheduler is not None:
        _check_dask()
    directory = output_dir if output_dir is not None else Path("kubetide-sweeps") / plan.scenario.name
    keys = [axis.key for axis in plan.axes]
    progress = SweepProgress(len(plan.runs), stream=sys.stderr, label=plan.scenario.name)
    interrupted = False
    outcome: SweepOutcome | None = None
    try:
        with progress:
            outcome = run_sweep(
                plan,
                directory,
                _runner(dask_scheduler, workers),
                shared_disk=dask_scheduler is None,
                progress=progress,
                on_failure=_report_failure,
            )
    except ScenarioMismatch as exc:
        click.echo(f"kubetide sweep: {exc}", err=True)
        sys.exit(EXIT_INVALID)
    except KeyboardInterrupt:
        interrupted = True
    except _DaskError as exc:
        click.echo(f"kubetide sweep: {exc}", err=True)
        sys.exit(EXIT_FAILED_RUNS)
    rows = _finish(plan, directory, keys)
    done = sum(1 for row in rows if row.ok)
    failed = len(rows) - done
    if interrupted:
        click.echo(
            f"interrupted: {done} of {len(plan.runs)} runs done ({failed} failed); "
            "run the same command to finish the rest",
            err=True,
        )
        sys.exit(EXIT_INTERRUPTED)
    assert outcome is not None
    reused = f", {outcome.reused} from an earlier invocation" if outcome.reused else ""
    click.echo(f"{len(plan.runs)} runs: {done} ok, {failed} failed{reused}")
    for position, (row, layer) in enumerate(rank(rows)[:5], start=1):
        if row.ok and row.figures is not None:
            figs = row.figures
            settings = ", ".join(f"{k}={v}" for k, v in row.run.values.items()) or "(as written)"
            click.echo(
                f"  #{position} front {layer}: {settings}, seed {row.run.seed}: cost ${figs['cost']:,.2f}, "
                f"pending {figs['pending_pod_seconds']:,.0f} pod-s, p95 {figs['time_to_schedule_p95']:,.0f}s"
            )
    click.echo(f"Wrote {directory / 'sweep.csv'}, sweep.json")
    click.echo(f"Report: {directory / 'sweep.html'}")
    if failed:
        sys.exit(EXIT_FAILED_RUNS)


class _DaskError(Exception):
    pass


def _check_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        _invalid(
            "--dask-scheduler", ["--dask-scheduler: needs Dask distributed: pip install 'kubetide[dask]'"]
        )


def _runner(dask_scheduler: str | None, workers: int | None) -> Runner:
    if dask_scheduler is None:
        count = workers if workers is not None else default_workers()

        def local(tasks: Sequence[RunTask], done: Done) -> None:
            run_local(tasks, done, count)

        return local
    address = dask_scheduler

    def on_dask(tasks: Sequence[RunTask], done: Done) -> None:
        from kubetide.sim.sweep.on_dask import DaskUnavailable, run_dask

        try:
            run_dask(tasks, done, address)
        except DaskUnavailable as exc:
            raise _DaskError(str(exc)) from None

    return on_dask


def _report_failure(result: RunResult) -> None:
    record = result.record
    settings = ", ".join(f"{k}={v}" for k, v in record.get("settings", {}).items()) or "(as written)"
    click.echo(f"\nrun failed: {settings}, seed {record.get('seed')}: {record.get('error')}", err=True)


def _finish(plan: SweepPlan, directory: Path, keys: list[str]) -> list[Row]:
    """The three aggregate files, rebuilt from every record on disk (also after an interruption)."""
    store = SweepStore(directory)
    _, finished = tasks_of(plan, store, shared_disk=True)
    records = dict(finished)
    for run in plan.runs:  # failed runs' records too: sweep.* show them with their errors
        if run.key not in records:
            failed = store.failed(run)
            if failed is not None:
                records[run.key] = failed
    rows = rows_of(plan.runs, records)
    write_tables(directory, rows, keys)
    write_atomic(directory / "sweep.html", render_page(plan.scenario.name, rows, keys, plan.seeds))
    return rows


def _invalid(scenario: str, problems: list[str]) -> None:
    count = len(problems)
    click.echo(f"{scenario}: invalid sweep ({count} problem{'s' if count != 1 else ''}):", err=True)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    sys.exit(EXIT_INVALID)
