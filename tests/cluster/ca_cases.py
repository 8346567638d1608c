"""The Cluster Autoscaler conformance cases ``kubetide.cluster`` answers for.

There is no ``__init__.py`` in this directory: ``tests/sim/cluster`` is already a test package named
``cluster``, so these modules are imported by basename (hence the ``ca_`` prefixes).

``data/ca_cases.json`` holds the CA cases of ``/work/shared/conformance/ca-escalator-cases.json``
unchanged, minus the Escalator ones and the kinds ``tests/scheduling`` covers (binpacking_estimate,
estimator_limit, pod_ordering, fastpath_group_selection, utilization, drainability,
not_trigger_scale_up_message).

Each case runs as written, under the CA release it comes from (:func:`case_version`): CA 1.31 (kubetide's
default) unless the case is marked ``version: 1.36+`` or its upstream test is newer than CA 1.31 (the test
function, or its sub-case, is missing from ca-1.31.5's test file: :data:`NEWER_THAN_1_31`); those run with
``--ca-compatibility-version=1.36``. The 1.31 answers for the same inputs are pinned by unit tests of
their own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ALL: list[dict[str, Any]] = json.loads((Path(__file__).parent / "data" / "ca_cases.json").read_text())

# Found by grepping /work/upstream/ca-1.31.5's test files for each case's source (kubetide's kinds only;
# tests/scheduling has its own, version-independent kinds).
NEWER_THAN_1_31: dict[str, str] = {
    # eligibility_test.go TestFilterOutUnremovable: sub-cases added after 1.31.
    "ca-eligibility-broken-utilization": "'node is filtered out if utilization can't be calculated' (1.32)",
    "ca-eligibility-only-ds-threshold-zero": "'only daemonsets pods on this node (threshold=0)' (1.35)",
    # clusterstate_test.go: functions added after 1.31.
    "ca-readiness-notstarted-with-longer-startup": "TestUnreadyAfterCreationWithIncreasedStartupTime",
    "ca-expired-scaleup-reverts-full-increase": "TestExpiredScaleUpRevertsPartialIncrease (1.36)",
}


def case_version(case: dict[str, Any]) -> str:
    """The ``--ca-compatibility-version`` a case runs under: "1.36" for a case marked ``1.36+`` or newer
    than CA 1.31, else "1.31"."""
    marked = str(case["input"].get("version", ""))
    if marked.startswith("1.36") or case["id"] in NEWER_THAN_1_31:
        return "1.36"
    return "1.31"


def cases(kind: str) -> list[Any]:
    import pytest

    return [pytest.param(c, id=c["id"]) for c in ALL if c["kind"] == kind]


def by_id(case_id: str) -> dict[str, Any]:
    return next(c for c in ALL if c["id"] == case_id)
