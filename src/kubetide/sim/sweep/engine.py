"""Running a planned sweep: skip what a previous invocation finished, run the rest on an executor,
save each result the moment it arrives, and hand back every run's record in grid order.

Loss-free by construction: a record is written (atomically) as each run ends, by the worker when it
shares the disk, else here; the aggregate tables are only ever rebuilt from those records. An
interrupted sweep (Ctrl-C) keeps every finished run, and the same command runs only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubetide.sim.sweep.executors import Done
from kubetide.sim.sweep.grid import SweepPlan
from kubetide.sim.sweep.progress import SweepProgress
from kubetide.sim.sweep.results import Row, rows_of
from kubetide.sim.sweep.run import RunResult, RunTask
from kubetide.sim.sweep.store import SweepStore

__all__ = ["SweepOutcome", "run_sweep", "tasks_of"]

Runner = Callable[[Sequence[RunTask], Done], None]


@dataclass(frozen=True)
class SweepOutcome:
    rows: list[Row]
    reused: int  # runs a previous invocation had finished
    ran: int

    @property
    def failed(self) -> list[Row]:
        return [row for row in self.rows if not row.ok]


def tasks_of(
    plan: SweepPlan, store: SweepStore, *, shared_disk: bool
) -> tuple[list[RunTask], dict[str, Any]]:
    """The tasks still to run and the records of those already finished."""
    scenario = str(plan.scenario_path.resolve())
    finished: dict[str, Any] = {}
    tasks: list[RunTask] = []
    for run in plan.runs:
        record = store.finished(run)
        if record is not None:
            finished[run.key] = record
            continue
        directory = str(store.run_dir(run.key).resolve()) if shared_disk else None
        tasks.append(RunTask(run.key, scenario, run.overrides, run.values, run.seed, directory))
    return tasks, finished


def run_sweep(
    plan: SweepPlan,
    directory: Path,
    runner: Runner,
    *,
    shared_disk: bool = True,
    progress: SweepProgress | None = None,
    on_failure: Callable[[RunResult], None] | None = None,
) -> SweepOutcome:
    """Run what is missing; raises ScenarioMismatch before anything runs, KeyboardInterrupt as it comes."""
    store = SweepStore(directory)
    store.claim(plan.scenario.name, plan.scenario_path, plan.scenario_sha256)
    tasks, records = tasks_of(plan, store, shared_disk=shared_disk)
    reused = len(records)
    if progress is not None:
        progress.already = progress.done = reused

    def done(result: RunResult) -> None:
        store.save(result)
        records[str(result.record["key"])] = result.record
        if progress is not None:
            progress.update(result.ok)
        if not result.ok and on_failure is not None:
            on_failure(result)

    runner(tasks, done)
    return SweepOutcome(rows_of(plan.runs, records), reused=reused, ran=len(tasks))
