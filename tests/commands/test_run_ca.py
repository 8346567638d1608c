"""``kubetide run cluster-autoscaler``: its plan served on /debug/plan, saying whether it acts."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kubetide.cluster.options import AutoscalingOptions
from kubetide.commands.run import cluster_autoscaler as run_ca
from kubetide.commands.run.cluster_autoscaler import REGISTRY, ClusterAutoscalerComponent
from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import leader_from, parse_line, settings_from
from kubetide.live.cluster_autoscaler.metrics import CAMetrics
from kubetide.live.guard import WriteGate
from kubetide.testing.apiserver import FakeApi
from kubetide.testing.cloud import RecordingCloud


@pytest.fixture(autouse=True)
def _own_metrics_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each component registers CA's metrics: in a registry of its own here."""

    def metrics(*, per_nodegroup: bool) -> CAMetrics:
        return CAMetrics(per_nodegroup=per_nodegroup, registry=CollectorRegistry())

    monkeypatch.setattr(run_ca, "CAMetrics", metrics)


def component(*flags: str) -> tuple[Runtime, ClusterAutoscalerComponent]:
    parsed = parse_line(list(flags), REGISTRY)
    leader = leader_from(parsed.values, name_flag="leader-elect-resource-name", namespace="kube-system")
    settings = settings_from("cluster-autoscaler", parsed, address=":0", leader=leader)
    runtime = Runtime(settings, FakeApi().rest(), HealthLimits())
    gate = WriteGate("cluster-autoscaler", runtime.may_act, dry_run=settings.dry_run)
    ca = ClusterAutoscalerComponent(
        runtime.rest, AutoscalingOptions(), RecordingCloud(), runtime, gate, per_nodegroup=False
    )
    return runtime, ca


def test_the_plan_is_served_on_debug_plan_and_says_whether_it_acts() -> None:
    runtime, ca = component("--leader-elect=false")
    assert runtime.pages["/debug/plan"] == ca.published.page
    code, doc = ca.published.page({})
    assert code == 200 and (doc["mode"], doc["loops"], doc["latest"]) == ("acting", 0, None)
    _, dry = component("--dry-run")
    page: Any = dry.published.page({})[1]
    assert page["mode"] == "dry-run" and dry.gate.dry_run
