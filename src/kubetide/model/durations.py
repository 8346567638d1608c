"""Go-style durations (``90s``, ``1h30m``, ``500ms``) as float seconds: scenario files, CA flags, CRD fields.

The grammar is Go's ``time.ParseDuration`` (units ``ns us µs ms s m h``, fractions allowed, several
terms concatenated) without the sign: no setting here is a negative duration. Plain numbers are
seconds, as Kubernetes' ``*Seconds`` fields are.
"""

from __future__ import annotations

import math
import re

__all__ = ["DurationError", "format_duration", "parse_duration"]

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
_HINT = "like 90s, 15m, 1h30m, 500ms, or a number of seconds"


class DurationError(ValueError):
    """Text that is not a duration; the message quotes it."""


def parse_duration(value: object) -> float:
    """Seconds for ``value``: a non-negative number, or a Go duration string."""
    if isinstance(value, bool):
        raise DurationError(f"must be a duration {_HINT}, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        seconds = _parse_text(value.strip())
    else:
        raise DurationError(f"must be a duration {_HINT}, got {_describe(value)}")
    if not math.isfinite(seconds):
        raise DurationError(f"must be a finite duration, got {value!r}")
    if seconds < 0:
        raise DurationError(f"must not be negative, got {value!r}")
    return seconds


def _parse_text(text: str) -> float:
    if text in ("0", "0.0"):
        return 0.0
    if re.fullmatch(r"\d+(\.\d*)?", text):
        return float(text)  # "90" from a --set or a quoted YAML value: seconds, like a number
    pos, total = 0, 0.0
    while pos < len(text):
        match = _TERM.match(text, pos)
        if match is None:
            raise DurationError(f"must be a duration {_HINT}, got {text!r}")
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos == 0:
        raise DurationError(f"must be a duration {_HINT}, got {text!r}")
    return total


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def format_duration(seconds: float) -> str:
    """Short Go-like text for a number of seconds: ``5400`` -> ``1h30m``, ``0.5`` -> ``500ms``."""
    if seconds < 0:
        return "-" + format_duration(-seconds)
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = ""
    if hours:
        out += f"{int(hours)}h"
    if minutes:
        out += f"{int(minutes)}m"
    if secs:
        out += f"{secs:g}s"
    return out
