"""Go-style durations (``90s``, ``1h30m``, ``500ms``) as float seconds: scenario files, CA flags, CRD fields.

:func:`parse_go_duration` is Go's ``time.ParseDuration``: a sign, then terms of ASCII digits (a fraction
allowed) each with a unit (``ns us µs μs ms s m h``), ``0`` the one number without a unit, and a total
that fits Go's ``time.Duration`` (int64 nanoseconds: at most 2562047h47m16.854775807s). Unicode digits
(``١h``, ``１0s``) are not digits to Go, nor here. :func:`parse_duration` is the reading kubetide's own
files use: the same grammar without the sign (no setting here is a negative duration), and plain
numbers as seconds, as Kubernetes' ``*Seconds`` fields are.
"""

from __future__ import annotations

import math
import re

__all__ = ["MAX_DURATION_SECONDS", "DurationError", "format_duration", "parse_duration", "parse_go_duration"]

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
# [0-9], not \d: Python's \d takes any Unicode digit, Go's parser ASCII ones only.
_TERM = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_SECONDS = re.compile(r"[0-9]+(\.[0-9]*)?")
_HINT = "like 90s, 15m, 1h30m, 500ms, or a number of seconds"
# Go's time.Duration is int64 nanoseconds: ParseDuration refuses more ("invalid duration").
MAX_DURATION_SECONDS = (2**63 - 1) / 1e9
_MAX_TEXT = "2562047h47m16.854775807s"


class DurationError(ValueError):
    """Text that is not a duration; the message quotes it."""


def parse_duration(value: object) -> float:
    """Seconds for ``value``: a non-negative number, or a Go duration string."""
    if isinstance(value, bool):
        raise DurationError(f"must be a duration {_HINT}, got {value!r}")
    if isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:  # an integer past float64
            raise DurationError(f"too long: Go durations hold at most {_MAX_TEXT}, got {value!r}") from None
    elif isinstance(value, str):
        seconds = _parse_text(value.strip())
    else:
        raise DurationError(f"must be a duration {_HINT}, got {_describe(value)}")
    if not math.isfinite(seconds):
        raise DurationError(f"must be a finite duration, got {value!r}")
    if seconds < 0:
        raise DurationError(f"must not be negative, got {value!r}")
    if seconds > MAX_DURATION_SECONDS:
        raise DurationError(f"too long: Go durations hold at most {_MAX_TEXT}, got {value!r}")
    return seconds


def _parse_text(text: str) -> float:
    if text in ("0", "0.0"):
        return 0.0
    if _SECONDS.fullmatch(text):
        return float(text)  # "90" from a --set or a quoted YAML value: seconds, like a number
    return _terms(text, f"must be a duration {_HINT}, got {text!r}")


def _terms(body: str, error: str) -> float:
    pos, total = 0, 0.0
    while pos < len(body):
        match = _TERM.match(body, pos)
        if match is None:
            raise DurationError(error)
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos == 0:
        raise DurationError(error)
    if total > MAX_DURATION_SECONDS:
        raise DurationError(f"too long: Go durations hold at most {_MAX_TEXT}, got {body!r}")
    return total


def parse_go_duration(text: str) -> float:
    """Seconds of a Go duration, signed (``-2m`` is -120.0), exactly as ``time.ParseDuration`` reads
    it: no surrounding spaces, no bare numbers but ``0``; DurationError quotes what Go refuses."""
    if not isinstance(text, str):
        raise DurationError(f"time: invalid duration {text!r}")
    sign = -1.0 if text[:1] == "-" else 1.0
    body = text[1:] if text[:1] in ("-", "+") else text
    if body == "0":
        return 0.0
    if not body:
        raise DurationError(f"time: invalid duration {text!r}")
    return sign * _terms(
        body, f"time: invalid duration {text!r} (expected a number and a unit: ns us ms s m h)"
    )


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
