"""The Cluster Autoscaler conformance cases ``kubetide.cluster`` answers for.

There is no ``__init__.py`` in this directory: ``tests/sim/cluster`` is already a test package named
``cluster``, so these modules are imported by basename (hence the ``ca_`` prefixes).

``data/ca_cases.json`` holds the CA cases of ``/work/shared/conformance/ca-escalator-cases.json``
unchanged, minus the Escalator ones and the kinds ``tests/scheduling`` covers (binpacking_estimate,
estimator_limit, pod_ordering, fastpath_group_selection, utilization, drainability,
not_trigger_scale_up_message).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ALL: list[dict[str, Any]] = json.loads((Path(__file__).parent / "data" / "ca_cases.json").read_text())


def cases(kind: str) -> list[Any]:
    import pytest

    return [pytest.param(c, id=c["id"]) for c in ALL if c["kind"] == kind]


def by_id(case_id: str) -> dict[str, Any]:
    return next(c for c in ALL if c["id"] == case_id)
