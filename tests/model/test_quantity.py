"""Quantities parse exactly as apimachinery does, and their integer views round up."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetide.model.quantity import QuantityError, format_milli, parse_quantity


@pytest.mark.parametrize(
    ("text", "milli", "value"),
    [
        ("500m", 500, 1),
        ("1.5", 1500, 2),
        ("2", 2000, 2),
        ("16Gi", 16 * 2**30 * 1000, 16 * 2**30),
        ("1Ki", 1024_000, 1024),
        ("1e3", 1_000_000, 1000),
        ("1E-3", 1, 1),
        ("-1k", -1_000_000, -1000),
        ("+2", 2000, 2),
        (".5", 500, 1),
        ("1.G", 10**12, 10**9),
        ("100n", 1, 1),  # 0.0000001 rounds up to 1 milli
        ("0", 0, 0),
        ("1E", 10**21, 10**18),  # E alone is exa
        ("12345678901234567890", (2**63 - 1) * 1000, 2**63 - 1),  # capped at int64 max
    ],
)
def test_known_values(text: str, milli: int, value: int) -> None:
    q = parse_quantity(text)
    assert (q.milli, q.value) == (milli, value)


def test_sub_nano_values_round_up_to_a_nano() -> None:
    assert parse_quantity("0.0000000001").amount == Fraction(1, 10**9)
    assert parse_quantity("1.0000000001").amount == Fraction(10**9 + 1, 10**9)


@pytest.mark.parametrize("text", ["", "1x", "1e", "abc", " 1", "1K", "1.2.3", "1Mi2", "--1", "1 "])
def test_bad_quantities_quote_the_string(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert repr(text) in str(info.value)


def test_numbers_from_yaml_are_accepted() -> None:
    assert parse_quantity(2).milli == 2000
    assert parse_quantity(0.25).milli == 250
    with pytest.raises(QuantityError):
        parse_quantity(True)


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_milli_round_trip(milli: int) -> None:
    assert parse_quantity(format_milli(milli)).milli == milli


@given(
    st.integers(min_value=0, max_value=2**40),
    st.sampled_from(["", "k", "M", "G", "Ki", "Mi", "Gi", "m", "u", "n"]),
)
def test_suffixes_scale_exactly(n: int, suffix: str) -> None:
    factors = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    fractions = {"m": Fraction(1, 10**3), "u": Fraction(1, 10**6), "n": Fraction(1, 10**9)}
    expected = n * factors[suffix] if suffix in factors else n * fractions[suffix]
    assert parse_quantity(f"{n}{suffix}").amount == min(Fraction(expected), Fraction(2**63 - 1))


@given(
    st.decimals(min_value=-(10**9), max_value=10**9, allow_nan=False, allow_infinity=False, places=9),
    st.decimals(min_value=-(10**9), max_value=10**9, allow_nan=False, allow_infinity=False, places=9),
)
def test_ordering_matches_decimal_ordering(a: object, b: object) -> None:
    qa, qb = parse_quantity(str(a)), parse_quantity(str(b))
    assert (qa < qb) == (Fraction(str(a)) < Fraction(str(b)))
    assert (qa == qb) == (Fraction(str(a)) == Fraction(str(b)))


@given(st.fractions(min_value=0, max_value=10**6))
def test_milli_is_the_ceiling(x: Fraction) -> None:
    text = f"{x.numerator / x.denominator:.6f}"
    q = parse_quantity(text)
    assert q.milli * Fraction(1, 1000) >= q.amount > (q.milli - 1) * Fraction(1, 1000)


def test_apimachinery_quirks_are_kept() -> None:
    # Like ParseQuantity: a bare exponent is zero, a dot without digits is allowed.
    assert parse_quantity("e3").amount == 0
    assert parse_quantity("1.").milli == 1000
