"""Go numeric semantics the controller relies on: fixed-width wrap-around, truncating division,
IEEE division by zero, and float -> int32 conversions (implementation-defined when out of range)."""

from __future__ import annotations

import math

MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)

# Go's zero time.Time, as seconds relative to "now" (= 0): finite, older than anything a case holds.
ZERO_TIME = -1.0e12


class Undefined(Exception):
    """The Go result is implementation-defined (e.g. float64 -> int32 out of range): not comparable."""


def i32(x: int) -> int:
    """Wrap to int32 (Go integer arithmetic and int64 -> int32 conversions)."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def i64(x: int) -> int:
    x &= 0xFFFFFFFFFFFFFFFF
    return x - (1 << 64) if x >= 1 << 63 else x


def quo(a: int, b: int) -> int:
    """Go integer division: truncates toward zero (b != 0)."""
    if b == 0:
        raise ZeroDivisionError("integer divide by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def fdiv(a: float, b: float) -> float:
    """float64 division without Python's ZeroDivisionError."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        neg = (a < 0) != (math.copysign(1.0, b) < 0)
        return -math.inf if neg else math.inf
    return a / b


def f2i32(x: float) -> int:
    """``int32(x)``: truncation toward zero; out of range or NaN is implementation-defined in Go."""
    if math.isnan(x) or math.isinf(x):
        raise Undefined(f"int32({x})")
    t = math.trunc(x)
    if t > MAX_INT32 or t < MIN_INT32:
        raise Undefined(f"int32({x})")
    return t


def f2i64(x: float) -> int:
    if math.isnan(x) or math.isinf(x):
        raise Undefined(f"int64({x})")
    t = math.trunc(x)
    if t > MAX_INT64 or t < MIN_INT64:
        raise Undefined(f"int64({x})")
    return t


def pow10(n: int) -> float:
    """Go's ``math.Pow10`` for the small exponents quantities use (exact tables, one rounding)."""
    if n >= 0:
        return float(10**n)
    return 1.0 / float(10**-n)


def gceil(x: float) -> float:
    """``math.Ceil``: a float, keeping infinities and NaN."""
    if math.isnan(x) or math.isinf(x):
        return x
    return float(math.ceil(x))
