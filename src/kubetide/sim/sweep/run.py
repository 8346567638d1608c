"""One run of a sweep, as a task a worker executes: exactly ``kubetide simulate`` with the run's
``--set`` values and seed, and never an exception for the caller (a failing run is a record).

:func:`execute` is a plain top-level function of picklable values, so a process pool and a Dask worker
run it alike. With ``directory`` set (workers that share the sweep's file system) it writes the run's
outputs there and its record last, atomically: a record on disk means the run finished. Without it
(a cluster whose workers do not share the disk) it returns the files' bytes for the caller to write.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubetide.model.errors import ManifestError
from kubetide.sim.output.writer import write_outputs
from kubetide.sim.scenario import load_scenario
from kubetide.sim.scenario.checks import unimplemented_autoscalers
from kubetide.sim.simulation import IMPLEMENTED_AUTOSCALERS, Simulation

__all__ = ["RECORD", "RunResult", "RunTask", "execute", "failure_record", "write_atomic"]

RECORD = "result.json"


@dataclass(frozen=True)
class RunTask:
    key: str
    scenario: str  # absolute path: a worker's working directory may differ
    overrides: tuple[str, ...]
    settings: dict[str, Any]
    seed: int
    directory: str | None  # write outputs and record here; None: return the files


@dataclass
class RunResult:
    record: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    written: bool = False  # the record is on disk already

    @property
    def ok(self) -> bool:
        return self.record.get("status") == "ok"


def _record(task: RunTask, status: str, **fields: Any) -> dict[str, Any]:
    return {
        "key": task.key,
        "settings": task.settings,
        "seed": task.seed,
        "overrides": list(task.overrides),
        "status": status,
        **fields,
    }


def failure_record(task: RunTask, error: str, trace: str = "", wall_seconds: float = 0.0) -> dict[str, Any]:
    return _record(task, "failed", summary=None, error=error, traceback=trace, wall_seconds=wall_seconds)


def write_atomic(path: Path, text: str) -> None:
    """Write then rename: a reader (a resumed sweep) sees the whole file or none of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _simulate(task: RunTask, directory: Path) -> dict[str, Any]:
    """What ``kubetide simulate`` does (load, check, run, write), raising what it would report."""
    scenario = load_scenario(task.scenario, task.overrides)
    missing = unimplemented_autoscalers(scenario, IMPLEMENTED_AUTOSCALERS)
    if missing:
        raise ManifestError(missing)
    result = Simulation(scenario, seed=task.seed).run()
    write_outputs(directory, result.summary, result.timeline, result.events, result.meta)
    return result.summary.to_json()


def execute(task: RunTask) -> RunResult:
    start = time.perf_counter()
    files: dict[str, bytes] = {}
    try:
        if task.directory is not None:
            directory = Path(task.directory)
            (directory / RECORD).unlink(missing_ok=True)  # outputs and record never disagree
            summary = _simulate(task, directory)
        else:
            with tempfile.TemporaryDirectory(prefix="kubetide-run-") as tmp:
                summary = _simulate(task, Path(tmp))
                files = {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir())}
        record = _record(
            task, "ok", summary=summary, error=None, wall_seconds=round(time.perf_counter() - start, 3)
        )
    except Exception as exc:  # recorded, never raised: one bad run must not stop the others
        message = "; ".join(str(e) for e in exc.errors) if isinstance(exc, ManifestError) else str(exc)
        record = failure_record(
            task,
            f"{type(exc).__name__}: {message}",
            traceback.format_exc(),
            round(time.perf_counter() - start, 3),
        )
    if task.directory is None:
        return RunResult(record, files)
    directory = Path(task.directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(directory / RECORD, json.dumps(record, indent=2) + "\n")
    return RunResult(record, written=True)
