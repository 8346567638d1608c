"""``backoff_sequence`` cases: CA's exponential backoff per node group."""

from __future__ import annotations

from typing import Any

import pytest
from ca_cases import cases

from kubetide.cloud.instance import ErrorClass, InstanceErrorInfo
from kubetide.cluster.backoff import ExponentialBackoff


def _error(spec: dict[str, Any] | None) -> InstanceErrorInfo | None:
    if spec is None:
        return None
    return InstanceErrorInfo(ErrorClass[spec["class"]], spec["code"], spec["message"])


@pytest.mark.parametrize("case", [c for c in cases("backoff_sequence") if "ops" in c.values[0]["input"]])
def test_backoff_sequence(case: dict[str, Any]) -> None:
    # ca-backoff-default-doubling is worked out from the formula (upstream has no such unit test).
    p = case["input"]["params"]
    b = ExponentialBackoff(p["initial_s"], p["max_s"], p["reset_s"])
    results: list[dict[str, Any]] = []
    durations: list[float] = []
    remaining: list[int] = []
    for op in case["input"]["ops"]:
        group = op.get("group", "ng")
        if op["op"] == "backoff":
            until = b.backoff(group, _error(op.get("error")), op["t_s"])
            entry = b.entry(group)
            assert entry is not None
            durations.append(entry.duration)
            results.append({"backoff_until_s": until, "duration_s": entry.duration})
        elif op["op"] == "status":
            st = b.status(group, op["t_s"])
            r: dict[str, Any] = {"backed_off": st.backed_off}
            if st.error_info is not None:
                r["error_code"] = st.error_info.error_code
            results.append(r)
        elif op["op"] == "remove_backoff":
            b.remove_backoff(group)
            results.append({})
        elif op["op"] == "remove_stale":
            b.remove_stale(op["t_s"])
            remaining.append(len(b))
    expected = case["expected"]
    if "results" in expected:
        assert len(results) == len(expected["results"])
        for got, want in zip(results, expected["results"], strict=True):
            for key, value in want.items():
                if key == "note":
                    continue
                assert got[key] == pytest.approx(value), (key, got, want)
    if "durations_s" in expected:
        assert durations == expected["durations_s"]
    if "entries_after_each_remove_stale" in expected:
        assert remaining == expected["entries_after_each_remove_stale"]
