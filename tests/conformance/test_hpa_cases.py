"""Every public HPA conformance case, run through ``kubetide.conformance.run_case``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetide.conformance import run_case

CASES = json.loads((Path(__file__).parents[1] / "data" / "hpa-cases.json").read_text())["cases"]


def _matches(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    for key, want in expected.items():
        if key == "error_hint":
            continue
        if key == "stored_events_after" and key not in actual:
            continue  # internal layout, optional
        got = actual.get(key)
        if key == "conditions":
            if {tuple(c) for c in want} != {tuple(c) for c in got or []}:
                return False
        elif got != want:
            return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    actual = run_case(case)
    assert _matches(case["expected"], actual), f"expected {case['expected']}, got {actual}"


def test_run_case_does_not_read_expected_values() -> None:
    case = dict(CASES[0])
    case["expected"] = {k: "sentinel" for k in case["expected"]}
    assert run_case(case) == run_case(CASES[0])
