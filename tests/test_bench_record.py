"""The ``record`` bench's day is the one it claims: its memory figures mean something only if so."""

from __future__ import annotations

import pytest

from kubetide.bench import record
from kubetide.bench.live_objects import _node


def test_the_churn_keeps_the_cluster_at_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two pods come and two go every 10 s: a bench whose churned pods were never deleted (their keys
    # named another namespace) grew by 720 pods an hour, which read as the recorder's memory growing.
    monkeypatch.setattr(record, "PODS", 600)
    monkeypatch.setattr(record, "NODES", 20)
    monkeypatch.setitem(record.LISTS, "pods", ("PodList", 600, record._app_pod))
    monkeypatch.setitem(record.LISTS, "nodes", ("NodeList", 20, _node))
    [row] = record.run(hours=0.25)
    assert row["pods_listed"] == 600
    assert row["pods_at_end"] == 600 + 2  # the last two churned pods are still there
    assert row["actions"] == 0 and row["samples"] > 0
