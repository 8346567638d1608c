"""The replica calculator's integer helpers against the Go-semantics oracle: the shortcuts they take
for the usual non-negative, in-range case must give exactly the wrapped, truncated results."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubetide.hpa.replicas import _percent, _trunc_div

from .oracle.goint import i32, i64, quo

# Around every boundary the shortcuts test: zero, int32 and int64 (and int64 / 100 for the percentage).
_EDGES = [0, 1, 2**31 - 1, 2**31, 2**63 // 100, 2**63 // 100 + 1, 2**63 - 1, 2**63]
_ints = st.sampled_from(_EDGES).flatmap(lambda e: st.integers(e - 3, e + 3)) | st.integers(-(2**64), 2**64)
_nonzero = _ints.filter(lambda x: x != 0)


@given(_ints, _nonzero)
def test_trunc_div_is_go_s_integer_division(a: int, b: int) -> None:
    assert _trunc_div(a, b) == quo(a, b)


@given(_ints.map(i64), _nonzero.map(i64).filter(lambda x: x != 0))
def test_percent_is_int32_of_int64_usage_times_100_over_requests(usage: int, requests: int) -> None:
    assert _percent(usage, requests) == i32(quo(i64(usage * 100), requests))
