"""Numbers in users' text as Go reads them (``strconv``), and the integer ranges Go's types hold.

Python's ``int()`` and ``float()`` take more than Go does: Unicode digits (``int("١٠")`` is 10), digit
underscores, surrounding spaces; ``float()`` also takes ``nan`` and ``inf``. A value Go would refuse
must not be accepted here (a flag copied from a real deployment has to mean the same thing), so the
readers below take ASCII decimal digits only, and the range checks name Go's limits.
"""

from __future__ import annotations

import math
import re

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "NumberError",
    "finite_float",
    "is_ascii_digits",
    "parse_ascii_float",
    "parse_ascii_int",
]

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
# Go's ParseFloat also reads these; they parse, and the callers refuse them as not finite.
_SPECIAL = re.compile(r"[+-]?(inf|infinity|nan)", re.IGNORECASE)
# Longer digit strings than any int64 or float64 needs: refused before Python builds a huge number.
_MAX_DIGITS = 400


class NumberError(ValueError):
    """Text Go would not read as the number asked for; the message quotes it."""


def is_ascii_digits(text: str) -> bool:
    """One or more of 0-9 and nothing else (``str.isdigit`` also takes ``²`` and ``١``)."""
    return text.isascii() and text.isdigit()


def parse_ascii_int(text: str, *, low: int | None = INT64_MIN, high: int | None = INT64_MAX) -> int:
    """A signed decimal integer in ``[low, high]`` (default: Go's int64; None: unbounded on that
    side), as ``strconv.ParseInt`` reads it."""
    if len(text) > _MAX_DIGITS or not _INT.fullmatch(text):
        raise NumberError(f"must be an integer, got {text!r}")
    value = int(text)
    if (low is not None and value < low) or (high is not None and value > high):
        raise NumberError(f"out of range: must be between {low} and {high}, got {text}")
    return value


def parse_ascii_float(text: str) -> float:
    """A decimal float (``1.5``, ``2e-3``) or Go's ``Inf``/``NaN`` spellings, which the caller refuses
    with :func:`finite_float`."""
    if len(text) > _MAX_DIGITS or not (_FLOAT.fullmatch(text) or _SPECIAL.fullmatch(text)):
        raise NumberError(f"must be a number, got {text!r}")
    return float(text)


def finite_float(value: int | float) -> float:
    """``value`` as a finite float: NaN, the infinities and integers beyond float64 are refused."""
    try:
        out = float(value)
    except OverflowError:
        raise NumberError(f"must be a finite number, got {value!r}") from None
    if not math.isfinite(out):
        raise NumberError(f"must be a finite number, got {value!r}")
    return out
