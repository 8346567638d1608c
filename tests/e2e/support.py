"""Helpers for the end-to-end tests: reading `.e2e/env`, polling with a deadline, and kubectl."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
REPO_ROOT = Path(__file__).resolve().parents[2]


def read_env_file(path: Path) -> dict[str, str]:
    """Parses the KEY=VALUE lines (shell-quoted values) that `up` writes."""
    env = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            env[key] = "".join(shlex.split(value))
    return env


def wait_for(
    condition: Callable[[], T], timeout: float = 30.0, interval: float = 0.5, message: str = "condition"
) -> T:
    """Polls `condition` until it returns something truthy, and returns that.

    An exception raised by `condition` counts as a falsy observation (the object may not exist yet).
    On timeout: AssertionError with `message` and the last value (or exception) observed.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            last = condition()
            if last:
                return last
        except Exception as error:
            last = error
        if time.monotonic() >= deadline:
            raise AssertionError(f"{message}: not true after {timeout:.0f}s; last observed: {last!r}")
        time.sleep(interval)


class Kubectl:
    """Debian's kubectl 1.20 (the server's version) against the test cluster, as the admin."""

    def __init__(self, executable: str, kubeconfig: Path) -> None:
        self.base = [executable, "--kubeconfig", str(kubeconfig)]

    def __call__(self, *args: str, input: str | None = None, timeout: float = 60.0) -> str:
        """Runs `kubectl ARGS` and returns stdout; raises AssertionError with stderr on failure."""
        result = subprocess.run(
            [*self.base, *args], input=input, capture_output=True, text=True, timeout=timeout, check=False
        )
        if result.returncode != 0:
            raise AssertionError(
                f"kubectl {shlex.join(args)} failed ({result.returncode}): {result.stderr.strip()}"
            )
        return result.stdout

    def json(self, *args: str) -> Any:
        """`kubectl ARGS -o json`, parsed; None when kubectl printed nothing (`--ignore-not-found`)."""
        out = self(*args, "-o", "json")
        return json.loads(out) if out.strip() else None

    def create(self, manifest: dict[str, Any]) -> Any:
        """Creates one object from a manifest and returns it as the server stored it."""
        return json.loads(self("create", "-f", "-", "-o", "json", input=json.dumps(manifest)))


def free_port() -> int:
    """A free loopback port (bound and released: nothing else on this machine asks for it meanwhile)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class KubetideProcess:
    """One `kubetide run COMPONENT ...` process of a test: its log, its HTTP endpoints, its stop."""

    def __init__(self, name: str, argv: list[str], log_path: Path, port: int) -> None:
        self.name = name
        self.port = port
        self.log_path = log_path
        self._log = log_path.open("w")
        self.proc = subprocess.Popen(
            argv, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ}
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log(self) -> str:
        if not self._log.closed:  # closed once stopped; the file stays readable
            self._log.flush()
        return self.log_path.read_text()

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as resp:
                return int(resp.status), resp.read().decode()
        except urllib.error.HTTPError as err:
            return int(err.code), err.read().decode()

    def metric(self, name: str, **labels: str) -> float | None:
        """The value of one sample of `/metrics` (None when absent)."""
        _, text = self.get("/metrics")
        for line in text.splitlines():
            if line.startswith("#") or not line.startswith(name):
                continue
            series, _, value = line.rpartition(" ")
            if series == name or (
                series.startswith(name + "{") and all(f'{k}="{v}"' in series for k, v in labels.items())
            ):
                return float(value)
        return None

    def stop(self, sig: int = 15, timeout: float = 20.0) -> int:
        """Send `sig` (SIGTERM by default) and wait for the exit; SIGKILL after `timeout`."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()
        return int(self.proc.returncode)


def restart_apiserver(down_for: float) -> None:
    """Stop the test cluster's kube-apiserver, wait ``down_for`` seconds, start it again (the same
    flags) and return once it answers: ``hack/e2e_cluster.py restart``."""
    subprocess.run(
        [sys.executable, str(REPO_ROOT / "hack" / "e2e_cluster.py"), "restart", "kube-apiserver",
         f"--down-for={down_for}"],
        check=True, timeout=180,
    )  # fmt: skip
