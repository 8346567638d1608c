"""Loops decide only on synced caches: after a watch failure a loop is skipped (counted, logged once)
until every cache it reads has listed again; and failures are described in one line naming the cause.
(The runtime that asks the gate before each loop: tests/commands/test_runtime.py.)"""

from __future__ import annotations

import logging

import pytest
from prometheus_client import REGISTRY

from kubetide.kube.failures import describe
from kubetide.kube.rest import KubeStatusError
from kubetide.kube.sync_gate import CACHE_NOT_SYNCED, SyncGate


def skipped(component: str) -> float:
    value = REGISTRY.get_sample_value(
        "kubetide_loops_skipped_total", {"component": component, "reason": CACHE_NOT_SYNCED}
    )
    return value or 0.0


def test_the_gate_skips_while_a_cache_is_unsynced_and_logs_the_outage_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    gate = SyncGate("gate-test", clock=lambda: now[0])
    before = skipped("gate-test")
    with caplog.at_level(logging.INFO, logger="kubetide.run"):
        assert gate.allows([])
        for _ in range(3):
            now[0] += 10
            assert not gate.allows(["nodes", "poddisruptionbudgets"])
        now[0] += 10
        assert gate.allows([])
        assert gate.allows([])
    assert skipped("gate-test") == before + 3
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "gate-test: loops skipped until these caches have listed again after a watch failure: "
        "nodes, poddisruptionbudgets",
        "gate-test: caches synced again; 3 loops skipped over 30.0s",
    ]


def test_describe_names_the_cause_on_one_line() -> None:
    assert describe(KubeStatusError(503, "ServiceUnavailable", "the server\nis restarting")) == (
        "503 ServiceUnavailable: the server is restarting"
    )
    assert describe(ConnectionRefusedError(111, "Connection refused")) == (
        "ConnectionRefusedError: [Errno 111] Connection refused"
    )
    assert describe(TimeoutError()) == "TimeoutError"
