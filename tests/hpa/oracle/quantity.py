"""The few quantity forms the strategies generate (``"150m"``, ``"2"``, ``"1.5"``, ``"0.05"``, ``"3k"``,
``"2Ki"``, ``"5e-2"``, ``"1500u"``), parsed as ``resource.ParseQuantity``'s int64 fast path does."""

from __future__ import annotations

import math
import re
from fractions import Fraction

from .goint import pow10

_DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_RE = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?([a-zA-Z]*|[eE][+-]?\d+)")


def _split(text: str) -> tuple[int, str, str, str]:
    m = _RE.fullmatch(text)
    if m is None:
        raise ValueError(f"unsupported quantity {text!r}")
    sign = -1 if m.group(1) == "-" else 1
    return sign, m.group(2) or "0", m.group(3) or "", m.group(4)


def exact(text: str | int) -> Fraction:
    sign, num, denom, suffix = _split(str(text))
    mant = Fraction(int(num + denom), 10 ** len(denom))
    if suffix in _DEC:
        v = mant * Fraction(10) ** _DEC[suffix]
    elif suffix in _BIN:
        v = mant * 2 ** _BIN[suffix]
    else:
        v = mant * Fraction(10) ** int(suffix[1:])
    # Values finer than a nano-unit round up to it (the strategies never produce them).
    assert v * 10**9 == int(v * 10**9), text
    return sign * v


def milli_value(text: str | int) -> int:
    """``Quantity.MilliValue()``: ceil(q * 1000)."""
    return math.ceil(exact(text) * 1000)


def approximate_float64(text: str | float) -> float:
    """``Quantity.AsApproximateFloat64()`` for a fast-path decimal quantity: ``float64(value) *
    math.Pow10(scale)`` with ``value`` the digits without the point and ``scale`` the suffix exponent
    minus the number of fraction digits."""
    sign, num, denom, suffix = _split(text if isinstance(text, str) else repr(text))
    if suffix in _BIN:
        raise ValueError("binary tolerances are not generated")
    exponent = _DEC[suffix] if suffix in _DEC else int(suffix[1:])
    value = sign * int(num + denom)
    scale = exponent - len(denom)
    if scale == 0:
        return float(value)
    return float(value) * pow10(scale)
