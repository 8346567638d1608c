"""``kubetide record``'s progress line on a terminal: how far the recording is and what it holds.

Only a terminal gets it (piped or captured stderr gets nothing), redrawn at most once a second; a
note printed meanwhile clears it first so the two never share a line.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from typing import TextIO

from kubetide.live.record.recorder import Totals
from kubetide.sim.output.progress import clock_text, is_tty

__all__ = ["RecordProgress"]


class RecordProgress:
    def __init__(
        self,
        duration: float,
        *,
        stream: TextIO,
        label: str = "",
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.duration = max(duration, 0.0)
        self.stream = stream
        self.enabled = is_tty(stream) if enabled is None else enabled
        self.label = label
        self._clock = clock
        self._last = float("-inf")
        self._width = 0

    def render(self, totals: Totals, columns: int = 100) -> str:
        fraction = min(max(totals.seconds / self.duration, 0.0), 1.0) if self.duration else 1.0
        text = (
            f" {clock_text(totals.seconds)} / {clock_text(self.duration)} {fraction * 100:5.1f}%  "
            f"{totals.actions} actions · {totals.samples} samples · {totals.events} events"
        )
        label = f"recording {self.label} " if self.label else "recording "
        width = max(10, min(30, columns - len(label) - len(text) - 3))
        filled = round(fraction * width)
        return f"{label}[{'#' * filled}{'.' * (width - filled)}]{text}"[: max(columns - 1, 0)]

    def update(self, totals: Totals) -> None:
        if not self.enabled:
            return
        now = self._clock()
        if now - self._last < 1.0:
            return
        self._last = now
        line = self.render(totals, shutil.get_terminal_size((100, 24)).columns)
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def clear(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
            self._last = float("-inf")

    def close(self) -> None:
        self.clear()
