"""The progress bar on stderr while a run replays: simulated time of the duration, percent, and speed
(simulated seconds per wall second).

Only a terminal gets it (contract §9): piped or captured stderr, as in CI, gets nothing at all. Redraws
are throttled to ``max_rate`` a second, so calling ``update`` on every simulated event costs one clock
read. This is the one place in the simulator that reads the wall clock; the clock is injectable for tests.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

__all__ = ["Progress", "clock_text", "is_tty"]


def clock_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


class Progress:
    """``update(t)`` as simulated time advances; ``close()`` (or leaving a ``with`` block) clears the line."""

    def __init__(
        self,
        duration: float,
        *,
        stream: TextIO | None = None,
        max_rate: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        enabled: bool | None = None,
        label: str = "",
    ) -> None:
        self.duration = max(float(duration), 0.0)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = is_tty(self.stream) if enabled is None else enabled
        self._interval = 1.0 / max_rate
        self._clock = clock
        self._start = clock()
        self._last_draw = float("-inf")
        self._label = label
        self._width = 0
        self._closed = False

    def update(self, t: float, *, force: bool = False) -> None:
        if not self.enabled or self._closed:
            return
        now = self._clock()
        if not force and now - self._last_draw < self._interval:
            return
        self._last_draw = now
        self._draw(t, now)

    def render(self, t: float, wall_elapsed: float, columns: int = 100) -> str:
        """The line shown at simulated time ``t`` after ``wall_elapsed`` wall seconds."""
        fraction = min(max(t / self.duration, 0.0), 1.0) if self.duration > 0 else 1.0
        speed = f"{t / wall_elapsed:,.0f}x" if wall_elapsed > 0 else "-"
        label = f"{self._label} " if self._label else ""
        text = f" {clock_text(t)} / {clock_text(self.duration)} {fraction * 100:5.1f}%  {speed} sim-s/s"
        bar_width = max(10, min(40, columns - len(label) - len(text) - 3))
        filled = round(fraction * bar_width)
        line = f"{label}[{'#' * filled}{'.' * (bar_width - filled)}]{text}"
        return line[: max(columns - 1, 0)]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _draw(self, t: float, now: float) -> None:
        columns = shutil.get_terminal_size((100, 24)).columns
        line = self.render(t, now - self._start, columns)
        # Pad over the previous line's tail: \r returns the cursor but does not erase.
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)


def is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        return False
