"""Go durations (``20s``, ``1m30s``, ``500ms``) as float seconds, for the agent's pod annotations and
the kwok provider's ``provisioningDelay``.

The grammar of Go's ``time.ParseDuration`` without the sign (a delay is never negative). The simulator
has its own copy in ``kubetide.sim.durations``: the live side may not import the simulator.
"""

from __future__ import annotations

import re

__all__ = ["DurationError", "parse_go_duration"]

_UNITS: dict[str, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_TERM = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


class DurationError(ValueError):
    """Not a Go duration; the message quotes the text."""


def parse_go_duration(text: str) -> float:
    """Seconds for a Go duration string (``"0"`` alone may omit the unit, as in Go)."""
    text = text.strip()
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(text):
        match = _TERM.match(text, pos)
        if match is None:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not text or pos != len(text):
        raise DurationError(f"not a duration like 20s, 1m30s or 500ms: {text!r}")
    return total
