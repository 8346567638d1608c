"""The upstream-derived Escalator conformance cases (a copy of the ``escalator_*`` part of
``/work/shared/conformance/ca-escalator-cases.json``), grouped by kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ALL: list[dict[str, Any]] = json.loads((Path(__file__).parent / "data" / "escalator_cases.json").read_text())


def params(kind: str) -> list[Any]:
    return [pytest.param(c, id=c["id"]) for c in ALL if c["kind"] == kind]
