"""A recording's directory: which file holds what, append-only logs and whole-file rewrites.

Everything a recording measures is appended (JSON lines or CSV rows), each flush in one ``write`` call
on a file opened for appending, so a crash leaves every flushed line whole but perhaps the last one cut
short; :func:`repair` cuts such a tail off when the recording resumes. What describes the recording as
a whole (the scenario, the recorder's own state) is rewritten by writing a temporary file and renaming
it over the old one, so it is always one version or the other, never half of each.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AppendLog", "Layout", "repair", "replace_text"]


@dataclass(frozen=True)
class Layout:
    """Where each part of a recording lives, relative to its directory."""

    root: Path

    SCENARIO = "scenario.yaml"
    STATE = "recording.json"  # the recorder's settings and node groups, for resuming
    OBJECTS = "objects.yaml"  # the objects at the start
    ACTIONS = "actions.jsonl"  # every change after it
    SAMPLES = "recorded/samples.jsonl"
    EVENTS = "recorded/events.jsonl"
    NOTES = "notes.txt"  # what was dropped or assumed, one line each
    METRICS = "metrics"  # one CSV per measured series

    def path(self, name: str) -> Path:
        return self.root / name

    def metric_file(self, workload: str, series: str) -> str:
        """The CSV of one series of one workload, relative to the directory: ``metrics/Deployment.
        default.web.cpu.csv`` (names are DNS names, so dots and dashes are all they hold)."""
        safe = "".join(
            c if c.isalnum() or c in "-_." else "_" for c in f"{workload.replace('/', '.')}.{series}"
        )
        return f"{self.METRICS}/{safe}.csv"


def repair(path: Path) -> int:
    """Cut a line left unfinished by a crash off the end of ``path``; the bytes removed (0: none, or
    no file)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return 0
        # Find the last newline: everything after it is the torn line.
        keep = 0
        block = 65536
        position = size
        while position > 0:
            start = max(0, position - block)
            f.seek(start)
            chunk = f.read(position - start)
            index = chunk.rfind(b"\n")
            if index >= 0:
                keep = start + index + 1
                break
            position = start
        f.truncate(keep)
        return size - keep


class AppendLog:
    """Lines appended to one file, each batch in one ``write``; the file (and its directory) made on the
    first batch, and ``header`` written first when the file is new."""

    def __init__(self, path: Path, header: str | None = None) -> None:
        self.path = path
        self.header = header
        self.lines_written = 0

    def exists(self) -> bool:
        return self.path.exists() and self.path.stat().st_size > 0

    def append(self, lines: Iterable[str]) -> None:
        batch = list(lines)
        if not batch:
            return
        new = not self.exists()
        text = "".join(line + "\n" for line in batch)
        if new and self.header is not None:
            text = self.header + "\n" + text
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = 0
            while written < len(data):  # a regular file takes it in one call; a signal may split it
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        self.lines_written += len(batch)

    def append_json(self, rows: Iterable[Any]) -> None:
        self.append(json.dumps(row, separators=(",", ":"), sort_keys=False) for row in rows)


def replace_text(path: Path, text: str) -> None:
    """Write ``path`` whole: a temporary file beside it, synced, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)
