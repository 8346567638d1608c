"""A sweep's directory: one subdirectory per run (``runs/<key>/``: the run's four outputs and its
``result.json``), and ``sweep-scenario.json`` naming the scenario the runs came from.

Resuming is reading records: a run whose record says ``ok`` is done; anything else (no record, a
half-written directory from an interrupted run, a failed run) runs again. A directory holds runs of
one scenario content only: results of an edited file must not be ranked beside the old ones, so a
sweep of different content is refused, naming both (see :class:`ScenarioMismatch`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubetide.sim.sweep.grid import RunSpec
from kubetide.sim.sweep.run import RECORD, RunResult, write_atomic

__all__ = ["IDENTITY", "RUNS", "ScenarioMismatch", "SweepStore"]

IDENTITY = "sweep-scenario.json"
RUNS = "runs"


class ScenarioMismatch(Exception):
    """The directory holds runs of another scenario content; the message says which and what to do."""


class SweepStore:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def claim(self, scenario: str, path: Path, sha256: str) -> None:
        """Mark the directory as this scenario's, or raise :class:`ScenarioMismatch` if another's."""
        identity = self.directory / IDENTITY
        try:
            known = json.loads(identity.read_text(encoding="utf-8"))
        except FileNotFoundError:
            known = None
        except (OSError, ValueError) as exc:
            raise ScenarioMismatch(f"{identity} cannot be read ({exc}): is this a sweep directory?") from None
        if known is not None:
            if known.get("sha256") != sha256:
                raise ScenarioMismatch(
                    f"{self.directory} holds runs of another scenario content ({known.get('path')!r}, "
                    f"sha256 {str(known.get('sha256'))[:12]}...; {str(path)!r} is sha256 {sha256[:12]}...): "
                    "results of different scenarios would be mixed. Use another --output-dir, "
                    "or remove the directory to start over"
                )
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"scenario": scenario, "path": str(path), "sha256": sha256}, indent=2) + "\n"
        write_atomic(identity, text)

    def run_dir(self, key: str) -> Path:
        return self.directory / RUNS / key

    def finished(self, run: RunSpec) -> dict[str, Any] | None:
        """The run's record if it finished well (and really is this run), else None: it runs again."""
        try:
            record: dict[str, Any] = json.loads((self.run_dir(run.key) / RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if record.get("status") != "ok" or record.get("seed") != run.seed:
            return None
        # The same overrides, or the same values spelt differently (0.10 and 0.1): the same run.
        same = record.get("overrides") == list(run.overrides) or _canonical(
            record.get("settings")
        ) == _canonical(run.values)
        return record if same else None

    def failed(self, run: RunSpec) -> dict[str, Any] | None:
        """The record of this run if its last attempt failed (shown with its error; it runs again)."""
        try:
            record: dict[str, Any] = json.loads((self.run_dir(run.key) / RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if record.get("status") == "failed" and record.get("seed") == run.seed else None

    def save(self, result: RunResult) -> None:
        """Write a result that came back in memory (files first, the record last); idempotent."""
        if result.written:
            return
        directory = self.run_dir(str(result.record["key"]))
        directory.mkdir(parents=True, exist_ok=True)
        (directory / RECORD).unlink(missing_ok=True)
        for name, content in result.files.items():
            (directory / name).write_bytes(content)
        write_atomic(directory / RECORD, json.dumps(result.record, indent=2) + "\n")
        result.written = True


def _canonical(settings: Any) -> str:
    return json.dumps(settings, sort_keys=True, default=str)
