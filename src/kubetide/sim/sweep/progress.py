"""The sweep's progress bar on stderr: runs done of the total, failed, and the time left.

Drawn as ``simulate``'s bar is (same bar, same clock format, terminal only, cleared at the end). The
estimate counts only runs finished by this invocation (a resumed sweep's earlier runs took no time
now): elapsed / runs finished now x runs left.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from kubetide.sim.output.progress import clock_text, is_tty

__all__ = ["SweepProgress"]


class SweepProgress:
    def __init__(
        self,
        total: int,
        *,
        already: int = 0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        enabled: bool | None = None,
        label: str = "",
    ) -> None:
        self.total = total
        self.already = already
        self.done = already
        self.failed = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = is_tty(self.stream) if enabled is None else enabled
        self._clock = clock
        self._start = clock()
        self._label = label
        self._width = 0
        self._closed = False

    def update(self, ok: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        self.draw()

    def render(self, wall_elapsed: float, columns: int = 100) -> str:
        fraction = self.done / self.total if self.total else 1.0
        now = self.done - self.already
        left = self.total - self.done
        eta = clock_text(wall_elapsed / now * left) if now and left else ("0:00:00" if not left else "-")
        label = f"{self._label} " if self._label else ""
        failed = f", {self.failed} failed" if self.failed else ""
        text = f" {self.done}/{self.total} runs{failed} {fraction * 100:5.1f}%  ETA {eta}"
        bar_width = max(10, min(40, columns - len(label) - len(text) - 3))
        filled = round(fraction * bar_width)
        return f"{label}[{'#' * filled}{'.' * (bar_width - filled)}]{text}"[: max(columns - 1, 0)]

    def draw(self) -> None:
        if not self.enabled or self._closed:
            return
        line = self.render(self._clock() - self._start, shutil.get_terminal_size((100, 24)).columns)
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()

    def __enter__(self) -> SweepProgress:
        self.draw()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
