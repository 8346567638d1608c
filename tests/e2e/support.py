"""Helpers for the end-to-end tests: reading `.e2e/env`, polling with a deadline, and kubectl."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


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
        """`kubectl ARGS -o json`, parsed."""
        return json.loads(self(*args, "-o", "json"))

    def create(self, manifest: dict[str, Any]) -> Any:
        """Creates one object from a manifest and returns it as the server stored it."""
        return json.loads(self("create", "-f", "-", "-o", "json", input=json.dumps(manifest)))
