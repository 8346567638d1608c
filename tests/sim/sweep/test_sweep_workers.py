"""Sweeps on real worker processes: the local pool surviving a killed worker, and a real Dask
``LocalCluster`` on loopback (two worker processes) running a sweep and resuming it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubetide.cli import main
from kubetide.sim.sweep.engine import run_sweep
from kubetide.sim.sweep.executors import run_local
from kubetide.sim.sweep.grid import plan_sweep

MAX_SIZE = "spec.nodeGroups[0].maxSize"


def _grandchildren() -> list[int]:
    """Our children's children: the pool's workers (forked by the forkserver we started)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    return [g for c in children.get(os.getpid(), []) for g in children.get(c, [])]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_killed_worker_costs_a_retry_not_the_runs(tiny: Path, tmp_path: Path) -> None:
    doc = yaml.safe_load(tiny.read_text())
    doc["spec"]["duration"] = "48h"  # runs of a second or more, so the kill lands mid-run
    tiny.write_text(yaml.safe_dump(doc))
    plan = plan_sweep(tiny, [f"{MAX_SIZE}=3,4,5,6"], seeds=1)
    killed: list[int] = []

    def kill_one() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            workers = _grandchildren()
            if workers:
                time.sleep(0.3)
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
            time.sleep(0.05)

    killer = threading.Thread(target=kill_one, daemon=True)
    killer.start()
    outcome = run_sweep(plan, tmp_path / "sw", lambda tasks, done: run_local(tasks, done, 2))
    killer.join(timeout=5)
    assert killed, "no worker process was found to kill"
    assert len(outcome.rows) == 4 and all(row.ok for row in outcome.rows), [
        r.record.get("error") for r in outcome.rows
    ]


def test_the_command_line_forks_its_workers_and_survives_one_killed(tiny: Path, tmp_path: Path) -> None:
    """``kubetide sweep`` is single-threaded, so its pool forks the workers from the command itself
    (no forkserver to wait for): they are its children, and one killed mid-run costs a retry only."""
    doc = yaml.safe_load(tiny.read_text())
    doc["spec"]["duration"] = "48h"
    tiny.write_text(yaml.safe_dump(doc))
    out = tmp_path / "sw"
    command = [sys.executable, "-m", "kubetide", "sweep", str(tiny), "--grid", f"{MAX_SIZE}=3,4,5,6"]
    process = subprocess.Popen(
        [*command, "--workers", "2", "--output-dir", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        killed = None
        while killed is None and time.monotonic() < deadline and process.poll() is None:
            # Forks of the command carry its command line (a forkserver's children do not).
            workers = [pid for pid in _grandchildren() if b"sweep" in _cmdline(pid)]
            if len(workers) == 2:
                time.sleep(0.3)
                os.kill(workers[0], signal.SIGKILL)
                killed = workers[0]
            time.sleep(0.05)
        # Generous: on a loaded machine four 48 h runs and a retry take minutes; a hang still fails.
        _, err = process.communicate(timeout=900)
    finally:
        process.kill()
        process.communicate()  # waits, and closes the pipes (else a ResourceWarning fails a later test)
    assert killed is not None, "the command never had two worker processes of its own"
    assert process.returncode == 0, err
    rows = json.loads((out / "sweep.json").read_text())
    assert len(rows) == 4 and all(row["error"] is None for row in rows), rows


def test_a_threaded_caller_gets_workers_from_a_forkserver() -> None:
    """Forking a process that runs threads can copy a lock held by one of them: only a
    single-threaded process forks its workers directly. Judged in a fresh interpreter: the test
    process may run other tests' threads."""
    script = """
import threading
from kubetide.sim.sweep.executors import _context
print(_context().get_start_method())
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
try:
    print(_context().get_start_method())
finally:
    stop.set()
    thread.join()
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.split() == ["fork", "forkserver"]


@pytest.fixture
def dask_cluster() -> object:
    distributed = pytest.importorskip("distributed")
    import dask

    # Worker processes import numpy and kubetide before they connect: on a loaded 2-core CI machine
    # that can pass dask's 30 s default, and the cluster then closes without starting up.
    with dask.config.set(
        {"distributed.comm.timeouts.connect": "180s", "distributed.comm.timeouts.tcp": "180s"}
    ):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        )
        try:
            yield cluster
        finally:
            cluster.close()


def test_a_sweep_on_a_dask_local_cluster_writes_everything_and_resumes(
    tiny: Path, tmp_path: Path, dask_cluster: object
) -> None:
    address = dask_cluster.scheduler_address  # type: ignore[attr-defined]
    out = tmp_path / "sw"
    args = ["sweep", str(tiny), "--grid", f"{MAX_SIZE}=3,6", "--seeds", "2", "--dask-scheduler", address]
    result = CliRunner().invoke(main, [*args, "--output-dir", str(out)])
    assert result.exit_code == 0, result.output + result.stderr
    assert "4 runs: 4 ok, 0 failed" in result.stdout
    rows = json.loads((out / "sweep.json").read_text())
    assert len(rows) == 4 and all(r["summary"] is not None for r in rows)
    for row in rows:  # the workers sent the files back; this process wrote them
        assert (out / row["run"] / "report.html").is_file()
    assert (out / "sweep.html").is_file() and (out / "sweep.csv").is_file()
    (out / rows[0]["run"] / "result.json").unlink()  # as if that run had been lost
    again = CliRunner().invoke(main, [*args, "--output-dir", str(out)])
    assert again.exit_code == 0, again.output + again.stderr
    assert "4 runs: 4 ok, 0 failed, 3 from an earlier invocation" in again.stdout


def test_an_unreachable_scheduler_is_named() -> None:
    pytest.importorskip("distributed")
    import socket

    from kubetide.sim.sweep.on_dask import DaskUnavailable, run_dask
    from kubetide.sim.sweep.run import RunTask

    with socket.socket() as s:  # a free loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DaskUnavailable, match=f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"):
        task = RunTask("k", "/nowhere.yaml", (), {}, 1, None)
        run_dask([task], lambda result: None, f"tcp://127.0.0.1:{port}", timeout=1.0)


def test_without_dask_the_option_says_what_to_install(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)  # as if not installed
    result = CliRunner().invoke(
        main,
        ["sweep", str(tiny), "--dask-scheduler", "tcp://127.0.0.1:1", "--output-dir", str(tmp_path / "o")],
    )
    assert result.exit_code == 2
    assert "pip install 'kubetide[dask]'" in result.stderr and "Traceback" not in result.output
