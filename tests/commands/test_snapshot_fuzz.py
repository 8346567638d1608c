"""The two snapshot files (``explain --snapshot``, ``hpa explain FILE``) under random mutations of their
examples: a parsed snapshot or a ManifestError naming fields, never another exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings

from kubetide.commands.explain_snapshot import parse_snapshot
from kubetide.hpa.snapshot import read_snapshot
from kubetide.model.errors import ManifestError
from mutations import mutated

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CA_SNAPSHOT = yaml.safe_load((EXAMPLES / "ca-explain-snapshot.yaml").read_text())
HPA_SNAPSHOT = yaml.safe_load((EXAMPLES / "hpa-explain.yaml").read_text())


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(CA_SNAPSHOT, removals=False))
def test_a_cluster_autoscaler_snapshot_parses_or_names_its_problems(doc: Any) -> None:
    try:
        parse_snapshot(doc)
    except ManifestError as exc:
        assert exc.errors and all(e.message for e in exc.errors)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(HPA_SNAPSHOT, removals=False))
def test_an_hpa_snapshot_reads_or_names_its_problems(doc: Any) -> None:
    try:
        read_snapshot(doc)
    except ManifestError as exc:
        assert exc.errors and all(e.message for e in exc.errors)


def test_what_the_fuzz_found_is_named_not_raised() -> None:
    """Found by the fuzz test above: an epoch beyond a float, and a flag whose YAML key is a number."""
    doc = dict(CA_SNAPSHOT, time=10**400, flags={0: None})
    try:
        parse_snapshot(doc)
    except ManifestError as exc:
        paths = {e.path for e in exc.errors}
    else:
        raise AssertionError("the snapshot was accepted")
    assert {"time", "flags.0"} <= paths
