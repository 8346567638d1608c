"""Running a sweep's tasks on an existing Dask distributed cluster (``--dask-scheduler ADDRESS``).

Workers need kubetide installed and the scenario file (and its csv series) at the same absolute path;
they need not share the output directory: each run's files come back with its result and this process
writes them, as it writes every record. A run whose worker is lost is retried by Dask's scheduler
(``allowed-failures``) and, past that, recorded as failed here; a resumed sweep runs it again.

``distributed`` is the optional extra ``kubetide[dask]``: it is imported only here, only when used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubetide.sim.sweep.executors import Done
from kubetide.sim.sweep.run import RunResult, RunTask, execute, failure_record

__all__ = ["DaskUnavailable", "run_dask"]


class DaskUnavailable(Exception):
    """``distributed`` is missing or the scheduler cannot be reached; the message says which."""


def run_dask(tasks: Sequence[RunTask], done: Done, address: str, timeout: float = 30.0) -> None:
    if not tasks:  # a resumed sweep with nothing left needs no cluster
        return
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise DaskUnavailable(
            "--dask-scheduler needs Dask distributed: pip install 'kubetide[dask]'"
        ) from None
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    futures: dict[Any, RunTask] = {}
    try:
        # pure=False: a task's key must not be shared with another sweep's identical run in flight.
        futures = {
            client.submit(execute, task, pure=False, key=f"kubetide-run-{task.key}-{id(tasks)}"): task
            for task in tasks
        }
        for future in as_completed(list(futures), loop=client.loop):
            try:
                result: RunResult = future.result()
            except Exception as exc:  # KilledWorker, a lost connection: the run is lost, not the sweep
                result = RunResult(failure_record(futures[future], f"{type(exc).__name__}: {exc}"))
            done(result)
            future.release()
    except BaseException:
        client.cancel(list(futures))
        raise
    finally:
        client.close()
