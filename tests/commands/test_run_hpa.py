"""``kubetide run hpa``: where its memory is kept (flags), restored at the start of every leadership
term, and served on /debug/hpa."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kubetide.clock import VirtualClock
from kubetide.commands.run import hpa as run_hpa
from kubetide.commands.run.hpa import REGISTRY, HPAComponent, main
from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import leader_from, parse_line, settings_from
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver
from kubetide.live.hpa.controller_metrics import HPAControllerMetrics
from kubetide.live.hpa.memory_configmap import StoredMemory
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, HPAStatus
from kubetide.runners import HPARunner
from kubetide.testing.apiserver import FakeApi


def test_the_memory_configmap_flags_and_their_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert REGISTRY["memory-configmap"].default == "kubetide-hpa-memory"
    assert REGISTRY["memory-configmap-namespace"].default == "kubetide"
    with pytest.raises(SystemExit) as exit_info:
        main(["--memory-configmap=Not_A_Name", "--memory-configmap-namespace=a.b"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--memory-configmap: a lowercase RFC 1123 subdomain must consist of" in err
    assert "--memory-configmap-namespace: a lowercase RFC 1123 label must consist of" in err


class NoHPAs:
    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        return {}

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        raise AssertionError("no HPA to write")


class CountingStore:
    where = "ConfigMap kubetide/kubetide-hpa-memory"

    def __init__(self) -> None:
        self.reads = 0

    def read(self) -> StoredMemory | None:
        self.reads += 1
        return StoredMemory()

    def write(self, data: Mapping[str, str], written_at: str) -> None:
        pass


@pytest.fixture(autouse=True)
def _own_metrics_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each component registers the controller's metrics: in a registry of its own here."""
    monkeypatch.setattr(run_hpa, "HPAControllerMetrics", lambda: HPAControllerMetrics(CollectorRegistry()))


def runtime_for(*flags: str) -> tuple[Runtime, Mapping[str, object]]:
    parsed = parse_line(list(flags), REGISTRY)
    leader = leader_from(parsed.values, name_flag="leader-elect-resource-name", namespace="kubetide")
    settings = settings_from("horizontal-pod-autoscaler", parsed, address=":0", leader=leader)
    return Runtime(settings, FakeApi().rest(), HealthLimits()), parsed.values


def component(*flags: str) -> tuple[Runtime, HPAComponent, HPARunner, CountingStore]:
    runtime, values = runtime_for(*flags)
    hpa = HPAComponent(runtime.rest, HPAConfig(), runtime, values, None)
    nothing: Any = None  # the ports: never called without HPAs
    driver = HPADriver(NoHPAs(), nothing, nothing, nothing)
    hpa.reporter.driver = driver  # as HPAComponent.start sets it once the ports exist
    store = CountingStore()
    hpa.published.store = store
    return runtime, hpa, HPARunner(driver, VirtualClock(), 2.0, hpa.reporter), store


def test_the_memory_is_restored_at_the_first_loop_and_at_every_new_leadership_term() -> None:
    runtime, hpa, runner, store = component("--leader-elect=false")
    assert runtime.pages["/debug/hpa"] == hpa.published.page
    runner.tick(1000.0)
    runner.tick(1002.0)
    assert store.reads == 1
    runtime.terms += 1  # the Lease lost and taken again: another leader may have acted meanwhile
    runner.tick(1004.0)
    assert store.reads == 2


def test_without_a_configmap_nothing_is_kept_and_a_dry_run_says_so() -> None:
    runtime, values = runtime_for("--memory-configmap=", "--dry-run")
    hpa = HPAComponent(runtime.rest, HPAConfig(), runtime, values, None)
    code, page = hpa.published.page({})
    assert code == 200 and page["memoryStore"] is None and page["mode"] == "dry-run"
