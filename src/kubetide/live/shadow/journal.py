"""A shadow's records on disk, loss-free across restarts: JSON lines, appended and synced one by one.

``DIR/disagreements.jsonl`` holds one line per disagreement when it opens (``"type": "disagreement"``)
and one when it closes (``"type": "closed"``, its id and time); ``DIR/timeline.jsonl`` one line per loop
(the running autoscaler's group targets and nodes, an HPA's desired replicas on both sides), which
``kubetide shadow report DIR`` draws; a shadow with a counterfactual (the HPA's: kubetide's own replica
counts) records it there each loop and takes it back from the last line at a restart
(:meth:`Journal.last_timeline`). Each line is written with one ``write`` on a file opened for
appending and ``fsync``-ed before the loop goes on, so a crash loses at most the line being written;
a torn last line (no newline) is cut off when the journal opens again.

At start the journal reads its records back: the ids already written (never written twice) and the
disagreements still open, which the comparison resumes (:class:`~.compare.Comparison`), so an episode
that outlives a restart stays one record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubetide.live.shadow.compare import Closed, Disagreement

__all__ = ["DISAGREEMENTS", "TIMELINE", "Journal", "JournalError", "disagreement_from_json", "read_lines"]

DISAGREEMENTS = "disagreements.jsonl"
TIMELINE = "timeline.jsonl"


class JournalError(Exception):
    """The directory cannot be used (not writable, a file in the way, a record that does not read)."""


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON lines file (a torn last line left out); [] when there is none."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise JournalError(f"{path}: cannot read: {exc}") from exc
    lines = text.split("\n")
    complete = lines[:-1]  # the text after the last newline is a torn line, or empty
    out = []
    for number, line in enumerate(complete, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JournalError(f"{path}:{number}: not a JSON record: {exc.msg}") from exc
        if not isinstance(record, dict):
            raise JournalError(f"{path}:{number}: not a JSON object")
        out.append(record)
    return out


def disagreement_json(d: Disagreement, component: str, message: str) -> dict[str, Any]:
    return {
        "type": "disagreement",
        "id": d.id,
        "component": component,
        "kind": d.kind,
        "subject": d.subject,
        "group": d.group,
        "at": d.at,
        "running": d.running,
        "kubetide": d.kubetide,
        "why": d.why,
        "message": message,
        "delta": dict(d.delta),
        "until": d.until,
        "size": d.size,
    }


def disagreement_from_json(record: Mapping[str, Any]) -> Disagreement:
    """A record as written by :meth:`Journal.record`; KeyError/TypeError/ValueError when it is not one."""
    return Disagreement(
        kind=str(record["kind"]),
        subject=str(record["subject"]),
        at=float(record["at"]),
        running=str(record["running"]),
        kubetide=str(record["kubetide"]),
        why=str(record["why"]),
        delta={str(k): int(v) for k, v in dict(record["delta"]).items()},
        group=str(record.get("group", "")),
        until=None if record.get("until") is None else float(record["until"]),
        size=int(record.get("size", -1)),
    )


class Journal:
    """The records of one shadow in ``directory`` (created if missing)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(f"{directory}: cannot create: {exc.strerror or exc}") from exc
        if not directory.is_dir():
            raise JournalError(f"{directory}: not a directory")
        self.ids: set[str] = set()
        self.open: dict[str, Disagreement] = {}
        for path in (directory / DISAGREEMENTS, directory / TIMELINE):
            _cut_torn_line(path)
        for record in read_lines(directory / DISAGREEMENTS):
            self._replay(record)

    def _replay(self, record: Mapping[str, Any]) -> None:
        kind, ident = record.get("type"), str(record.get("id", ""))
        if kind == "disagreement":
            try:
                self.open[ident] = disagreement_from_json(record)
            except (KeyError, TypeError, ValueError) as exc:
                raise JournalError(f"{self.directory / DISAGREEMENTS}: record {ident!r}: {exc}") from exc
            self.ids.add(ident)
        elif kind == "closed":
            self.open.pop(ident, None)
            self.ids.add(f"closed/{ident}")

    def record(self, d: Disagreement, component: str, message: str) -> bool:
        """Append the disagreement (synced); False when its id was written already."""
        if d.id in self.ids:
            return False
        _append(self.directory / DISAGREEMENTS, disagreement_json(d, component, message))
        self.ids.add(d.id)
        self.open[d.id] = d
        return True

    def close(self, c: Closed) -> bool:
        key = f"closed/{c.id}"
        if key in self.ids:
            return False
        _append(self.directory / DISAGREEMENTS, {"type": "closed", "id": c.id, "at": c.at})
        self.ids.add(key)
        self.open.pop(c.id, None)
        return True

    def timeline(self, entry: Mapping[str, Any]) -> None:
        _append(self.directory / TIMELINE, dict(entry))

    def last_timeline(self, component: str) -> dict[str, Any] | None:
        """The last loop ``component`` recorded (its counterfactual state when it stopped), or None.
        Read from the end of the file, a block at a time: a day's timeline is not read whole."""
        path = self.directory / TIMELINE
        try:
            with path.open("rb") as f:
                end = f.seek(0, os.SEEK_END)
                tail, position = b"", end
                while position > 0:
                    step = min(_BLOCK, position)
                    position -= step
                    f.seek(position)
                    tail = f.read(step) + tail
                    lines = tail.split(b"\n")
                    complete = lines if position == 0 else lines[1:]  # the first may be cut
                    for line in reversed(complete):
                        record = _record(line)
                        if record is not None and record.get("component") == component:
                            return record
                    tail = lines[0] if position > 0 else b""
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise JournalError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        return None


_BLOCK = 1 << 16


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line) if line.strip() else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) else None


def _append(path: Path, record: Mapping[str, Any]) -> None:
    line = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def _cut_torn_line(path: Path) -> None:
    """A crash in the middle of a write leaves a line without its newline: cut it off, so the next
    record starts on a line of its own."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise JournalError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
            f.flush()
            os.fsync(f.fileno())
