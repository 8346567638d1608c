"""The progress bar: silent unless stderr is a terminal, throttled, cleared on close."""

from __future__ import annotations

import io

from kubetide.sim.output import Progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_is_written_when_not_a_tty() -> None:
    stream = io.StringIO()
    with Progress(3600, stream=stream) as progress:
        for t in range(0, 3600, 10):
            progress.update(t, force=True)
    assert stream.getvalue() == ""


def test_tty_gets_a_throttled_bar_then_a_cleared_line() -> None:
    stream, clock = FakeTTY(), Clock()
    progress = Progress(21600, stream=stream, clock=clock, max_rate=10)
    clock.now += 2.0
    progress.update(10800)
    first = stream.getvalue()
    assert first.startswith("\r[")
    assert "3:00:00 / 6:00:00" in first and " 50.0%" in first and "5,400x sim-s/s" in first
    progress.update(10900)  # same wall instant: throttled
    assert stream.getvalue() == first
    clock.now += 0.2
    progress.update(21600)
    assert "100.0%" in stream.getvalue()
    progress.close()
    assert stream.getvalue().endswith("\r")
    last_line = stream.getvalue().rsplit("\r", 2)[-2]
    assert last_line.strip() == ""
    progress.update(1, force=True)  # closed: silent
    assert stream.getvalue().endswith("\r")


def test_render_fits_the_terminal() -> None:
    progress = Progress(600, stream=io.StringIO(), label="quickstart")
    line = progress.render(300, 0.5, columns=60)
    assert len(line) < 60 and line.startswith("quickstart [")
    assert progress.render(0, 0, columns=100).endswith("- sim-s/s")
