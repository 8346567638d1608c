"""Where a sweep's runs execute: in this process, in a local process pool, or on a Dask cluster.

Each executor takes the tasks and a ``done`` callback, calls ``done`` once per task as soon as that
task ends (in completion order, in this process), and returns when all have, or raises
``KeyboardInterrupt`` after cancelling what has not started. Runs that raised or whose worker was lost
come back as failure records, never as exceptions.

The local pool forks its workers from this process when it runs a single thread (the command line:
the simulator is imported already, so a worker starts in milliseconds and both cores are busy from the
first moment); a process with threads (a library caller's) gets them from a forkserver that imports the
simulator once, as forking a threaded process is unsafe. Workers are reused for many runs. One worker
runs in this process (no pool to pay for).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from kubetide.sim.sweep.run import RunResult, RunTask, execute, failure_record

__all__ = ["Done", "Executor", "default_workers", "run_local", "run_serial"]

Done = Callable[[RunResult], None]
Executor = Callable[[Sequence[RunTask], Done], None]


def default_workers() -> int:
    """The cores this process may use (its affinity, which containers and taskset restrict)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_serial(tasks: Sequence[RunTask], done: Done) -> None:
    for task in tasks:
        done(execute(task))


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        # Single-threaded: a fork copies nothing a worker could trip on, and skips the ~0.7 s a
        # forkserver takes to import the simulator while the cores wait.
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["kubetide.sim.sweep.run"])
        return context
    return multiprocessing.get_context("spawn")


def run_local(tasks: Sequence[RunTask], done: Done, workers: int, *, retries: int = 2) -> None:
    """Run on a pool of ``workers`` processes. A worker that dies (killed, out of memory) breaks the
    pool and every run in flight with it: those runs go to a fresh pool, each at most ``retries``
    more times, then are recorded as lost (a resumed sweep tries them again)."""
    if workers <= 1 or len(tasks) <= 1:
        run_serial(tasks, done)
        return
    attempts: dict[str, int] = {}
    pending = list(tasks)
    while pending:
        lost: list[RunTask] = []
        pool = ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=_context())
        try:
            futures: dict[Future[RunResult], RunTask] = {pool.submit(execute, task): task for task in pending}
            for future in as_completed(futures):
                task = futures[future]
                try:
                    result = future.result()
                except BrokenProcessPool:
                    attempts[task.key] = attempts.get(task.key, 0) + 1
                    if attempts[task.key] <= retries:
                        lost.append(task)
                        continue
                    result = RunResult(
                        failure_record(
                            task, f"its worker process was lost {attempts[task.key]} times (killed?)"
                        )
                    )
                except Exception as exc:  # the run could not be sent or its result not read back
                    result = RunResult(failure_record(task, f"{type(exc).__name__}: {exc}"))
                done(result)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        pending = lost
