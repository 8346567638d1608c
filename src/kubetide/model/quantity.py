"""Kubernetes resource quantities (``500m``, ``16Gi``, ``1e3``), parsed exactly as apimachinery does.

The grammar and rounding follow ``k8s.io/apimachinery/pkg/api/resource``: a signed decimal number, then
one suffix (binary ``Ki..Ei``, decimal ``n u m "" k M G T P E``, or an exponent ``e3``/``E-2``). Values
finer than a nano-unit are rounded up (away from zero) to the nano-unit, magnitudes are capped at
2^63-1, and the integer views (:attr:`Quantity.milli`, :attr:`Quantity.value`) round up like
``MilliValue()`` and ``Value()``. Arithmetic is exact (``fractions.Fraction``), never float.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

__all__ = ["Quantity", "QuantityError", "format_milli", "parse_quantity"]

_MAX = Fraction(2**63 - 1)
_NANO = 10**9

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity. The message quotes the string."""


@dataclass(frozen=True, slots=True, order=False)
class Quantity:
    """An exact quantity. ``amount`` is the value in base units (cores, bytes, units)."""

    amount: Fraction
    text: str
    # apimachinery's internal decimal (unscaled integer, power of ten) for AsApproximateFloat64.
    unscaled: int = 0
    exponent: int = 0

    def decimal_parts(self) -> tuple[int, int]:
        return self.unscaled, self.exponent

    @property
    def milli(self) -> int:
        """Value in milli-units, rounded up away from zero (Kubernetes ``MilliValue()``)."""
        return _round_away(self.amount * 1000)

    @property
    def value(self) -> int:
        """Value in base units, rounded up away from zero (Kubernetes ``Value()``)."""
        return _round_away(self.amount)

    def as_float(self) -> float:
        """Approximate float value (Kubernetes ``AsApproximateFloat64()``)."""
        return float(self.amount)

    def __str__(self) -> str:
        return self.text

    def __lt__(self, other: Quantity) -> bool:
        return self.amount < other.amount

    def __le__(self, other: Quantity) -> bool:
        return self.amount <= other.amount

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.amount == other.amount

    def __hash__(self) -> int:
        return hash(self.amount)


def _round_away(x: Fraction) -> int:
    return math.ceil(x) if x >= 0 else -math.ceil(-x)


def parse_quantity(text: str | int | float) -> Quantity:
    """Parse a quantity; numbers (as YAML may give them) are read via their decimal text."""
    if isinstance(text, bool):
        raise QuantityError(f"quantities must be strings or numbers, not a boolean: {text!r}")
    if isinstance(text, int):
        text = str(text)
    elif isinstance(text, float):
        if not math.isfinite(text):
            raise QuantityError(f"{text!r} is not a valid quantity")
        text = repr(text)
    elif not isinstance(text, str):
        raise QuantityError(f"quantities must be strings or numbers, got {type(text).__name__}")
    return _parse_cached(text)


# More digits than any value within the int64 cap and above a nano-unit can need; refused before
# Python builds a number of that size (its int() also stops at 4,300 digits).
_MAX_DIGITS = 1000


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Quantity:
    negative, num, denom, suffix = _split(text)
    if len(num) + len(denom) > _MAX_DIGITS:
        raise QuantityError(f"{text[:40]!r}... is not a valid quantity: more than {_MAX_DIGITS} digits")
    scale = _interpret_suffix(text, suffix)
    mantissa = Fraction(int(num + denom), 10 ** len(denom))
    amount = mantissa * scale
    # Round non-zero values up to the nano-unit, "if you want some resources you should get some".
    if amount:
        amount = Fraction(math.ceil(amount * _NANO), _NANO)
    capped = amount > _MAX
    amount = min(amount, _MAX)
    unscaled, exponent = _go_decimal(num, denom, suffix, amount, capped)
    sign = -1 if negative else 1
    return Quantity(sign * amount, text, sign * unscaled, exponent)


def _go_decimal(num: str, denom: str, suffix: str, amount: Fraction, capped: bool) -> tuple[int, int]:
    """The (unscaled, exponent) pair ParseQuantity stores: its int64 fast path, else a nano decimal."""
    num = num.lstrip("0") or "0"
    digits = int(num + denom)
    if suffix in _BINARY_SUFFIXES:
        exp = _BINARY_SUFFIXES[suffix]
        precision = 15 - len(num) - int(exp * 3 / 10) - 1
        if not denom and precision >= 0 and digits * 2**exp < 2**63:
            return digits * 2**exp, 0
    else:
        exp = _DECIMAL_SUFFIXES.get(suffix, 0) if suffix in _DECIMAL_SUFFIXES else int(suffix[1:])
        scale = exp - len(denom)
        if 18 - (len(num) + len(denom)) >= 0 and scale >= -9:
            return digits, scale
    if capped:
        return 2**63 - 1, 0
    return int(amount * _NANO), -9


def _split(text: str) -> tuple[bool, str, str, str]:
    """Split into (negative, integer digits, fraction digits, suffix) with apimachinery's grammar."""
    if not text:
        raise QuantityError("'' is not a valid quantity: empty string")
    pos, end = 0, len(text)
    negative = False
    if text[0] in "+-":
        negative = text[0] == "-"
        pos = 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise QuantityError(f"{text!r} is not a valid quantity: unexpected {text[pos]!r} at position {pos}")
    return negative, num, denom, text[suffix_start:]


def _interpret_suffix(text: str, suffix: str) -> Fraction:
    if suffix in _DECIMAL_SUFFIXES:
        return Fraction(10) ** _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return Fraction(2 ** _BINARY_SUFFIXES[suffix])
    if len(suffix) > 1 and suffix[0] in "eE":
        exponent = suffix[1:]
        body = exponent[1:] if exponent[0] in "+-" else exponent
        if body and all(c in _DIGITS for c in body) and len(body) <= 18:
            value = int(exponent)
            if abs(value) > 1000:  # any such value is capped or rounded to a nano anyway
                return Fraction(10) ** (1000 if value > 0 else -1000)
            return Fraction(10) ** value
    raise QuantityError(
        f"{text!r} is not a valid quantity: unknown suffix {suffix!r} "
        "(use n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an exponent like e3)"
    )


def format_milli(milli: int) -> str:
    """Canonical text for an integer milli-value: ``1500`` -> ``"1500m"``, ``2000`` -> ``"2"``."""
    if milli % 1000 == 0:
        return str(milli // 1000)
    return f"{milli}m"
