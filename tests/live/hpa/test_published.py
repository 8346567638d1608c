"""What the live HPA publishes: each HPA's last decision and memory on /debug/hpa, a compact block per
sync at -v=4, and the memory kept in a store at most once a period, restored by the next leader."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver
from kubetide.hpa.explain import report
from kubetide.hpa.memory import document, read_document
from kubetide.hpa.ports import MetricsError, PodMetric, Scale
from kubetide.hpa.state import Recommendation, Remembered
from kubetide.live.hpa.memory_configmap import MemoryStoreError, StoredMemory
from kubetide.live.hpa.published import PublishedState
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, CrossVersionObjectReference, HPAStatus
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources
from kubetide.model.selectors import LabelSelector

T0 = 1_780_000_000.0  # the live loop's times are Unix times


@dataclass
class Cluster:
    """One Deployment per namespace (pods of 1 CPU requested), their cpu usage, and the HPAs."""

    replicas: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)  # milli-cpu per pod
    hpas: dict[str, HPA | ManifestError] = field(default_factory=dict)
    now: float = T0

    def add(self, namespace: str, replicas: int, usage: int, uid: str = "") -> None:
        self.replicas[namespace], self.usage[namespace] = replicas, usage
        manifest = {
            "metadata": {"name": "web", "namespace": namespace, "uid": uid or f"uid-{namespace}"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 50},
                        },
                    }
                ],
            },
        }
        self.hpas[f"{namespace}/web"] = HPA.from_manifest(manifest)

    # HPASource
    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        return dict(self.hpas)

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        self.hpas[hpa.key] = hpa.with_status(status)

    # ScaleTargetPort
    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        return Scale(self.replicas[namespace], self.replicas[namespace], "app=web")

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        self.replicas[namespace] = replicas

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return [
            Pod(
                name=f"web-{i}",
                namespace=namespace,
                labels={"app": "web"},
                phase="Running",
                ready=True,
                start_time=T0 - 10_000,
                ready_transition=T0 - 10_000,
                containers=(Container("app", Resources({"cpu": 1000})),),
            )
            for i in range(self.replicas[namespace])
        ]

    # MetricsSource
    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        return {
            f"web-{i}": PodMetric(self.usage[namespace], self.now - 5, 30.0)
            for i in range(self.replicas[namespace])
        }

    def pod_metrics(self, *args: Any) -> Mapping[str, PodMetric]:
        raise MetricsError("none")

    def object_metric(self, *args: Any) -> int:
        raise MetricsError("none")

    def external_metric(self, *args: Any) -> Sequence[int]:
        raise MetricsError("none")

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        pass


@dataclass
class Store:
    """The memory store's double: what was written, and a failure to raise when asked."""

    data: dict[str, str] | None = None
    written_at: str = ""
    writes: int = 0
    failure: str | None = None
    where: str = "ConfigMap kubetide/kubetide-hpa-memory"

    def read(self) -> StoredMemory | None:
        if self.failure:
            raise MemoryStoreError(self.failure)
        if self.data is None:
            return None
        memories = {k.replace(".", "/", 1): read_document(json.loads(v), k) for k, v in self.data.items()}
        return StoredMemory(memories, [], None)

    def write(self, data: Mapping[str, str], written_at: str) -> None:
        if self.failure:
            raise MemoryStoreError(self.failure)
        self.data, self.written_at = dict(data), written_at
        self.writes += 1


CONFIG = HPAConfig(sync_period=15.0, downscale_stabilization=300.0)


def setup(store: Store | None = None) -> tuple[Cluster, HPADriver, PublishedState]:
    cluster = Cluster()
    driver = HPADriver(cluster, cluster, cluster, cluster, CONFIG)
    return cluster, driver, PublishedState(CONFIG, store)


def tick(cluster: Cluster, driver: HPADriver, published: PublishedState, at: float) -> None:
    cluster.now = T0 + at
    published.observe(driver.tick(T0 + at), driver, T0 + at)


def test_the_page_shows_each_hpas_last_decision_as_hpa_explain_reports_it_and_its_memory() -> None:
    cluster, driver, published = setup()
    cluster.add("shop", replicas=2, usage=900)
    cluster.hpas["bad/web"] = ManifestError.at("spec.syncPeriod", "invalid duration '1x'")
    tick(cluster, driver, published, 0.0)
    code, page = published.page({})
    assert code == 200 and page["mode"] == "acting" and page["memoryStore"] is None
    shop = page["hpas"]["shop/web"]
    assert shop["uid"] == "uid-shop" and shop["lastSync"] == "2026-05-28T20:26:40.000000Z"
    assert shop["nextSync"] == "2026-05-28T20:26:55.000000Z"
    decision = shop["decision"]
    assert decision["hpa"] == "shop/web" and decision["scaled"] is True and decision["desired_replicas"] == 4
    assert decision["recommendations_before"] == []  # never synced before
    assert shop["memory"] == {
        "uid": "uid-shop",
        "recommendations": [{"replicas": 4, "timestamp": "2026-05-28T20:26:40.000000Z"}],
        "scaleUpEvents": [],
        "scaleDownEvents": [],
    }  # the first sync's seed (2 replicas) has a newer, higher one: not readable any more
    assert page["hpas"]["bad/web"]["problem"] == "spec.syncPeriod: invalid duration '1x'"
    assert page["hpas"]["bad/web"]["decision"] is None and page["hpas"]["bad/web"]["memory"] is None
    code, one = published.page({"hpa": "shop/web"})
    assert code == 200 and one["hpa"] == "shop/web" and one["decision"] == decision
    code, missing = published.page({"hpa": "shop/nope"})
    assert code == 404 and "known: bad/web, shop/web" in missing["error"]
    json.dumps(page)  # served as JSON as it is


def test_the_page_report_is_the_one_hpa_explain_makes() -> None:
    cluster, driver, published = setup()
    cluster.add("shop", replicas=6, usage=100)
    cluster.now = T0
    (done,) = driver.tick(T0)
    published.observe((done,), driver, T0)
    assert done.decision is not None and done.result is not None
    assert published.page({"hpa": "shop/web"})[1]["decision"] == report(done.decision, done.result)


def test_each_sync_is_one_compact_block_at_debug_level(caplog: pytest.LogCaptureFixture) -> None:
    cluster, driver, published = setup()
    cluster.add("shop", replicas=2, usage=900)
    with caplog.at_level(logging.DEBUG, logger="kubetide.hpa"):
        tick(cluster, driver, published, 0.0)
    (record,) = [r for r in caplog.records if r.levelno == logging.DEBUG]
    lines = record.getMessage().splitlines()
    assert lines[0] == "shop/web: 2 -> 4 (cpu resource utilization (percentage of request) above target)"
    assert lines[1].startswith(
        "  metric 1 cpu resource utilization (percentage of request) (target 50% of request): proposes 4"
    )
    assert lines[2].startswith("  normalization (default (no behavior)): proposal 4, stabilized 4")
    assert record.__dict__["hpa"] == "shop/web" and record.__dict__["decision"]["desired_replicas"] == 4
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="kubetide.hpa"):
        tick(cluster, driver, published, 15.0)
    assert [r for r in caplog.records if r.levelno == logging.DEBUG] == []


def test_the_memory_is_written_at_most_once_a_period_and_only_when_it_changed() -> None:
    store = Store()
    cluster, driver, published = setup(store)
    cluster.add("shop", replicas=3, usage=500)
    tick(cluster, driver, published, 0.0)
    assert store.writes == 1 and store.data is not None and set(store.data) == {"shop.web"}
    assert store.written_at == "2026-05-28T20:26:40.000000Z"
    cluster.add("api", replicas=3, usage=500)
    tick(cluster, driver, published, 5.0)  # a new HPA synced, but the period is not over: later
    assert store.writes == 1
    tick(cluster, driver, published, 15.0)
    assert store.writes == 2 and set(store.data) == {"shop.web", "api.web"}
    tick(cluster, driver, published, 20.0)  # nothing synced since: nothing to write
    tick(cluster, driver, published, 30.0)  # both synced: a newer recommendation each
    assert store.writes == 3
    del cluster.hpas["api/web"]
    tick(cluster, driver, published, 45.0)
    assert store.writes == 4 and set(store.data) == {"shop.web"}  # the deleted HPA's memory goes
    uid, state = read_document(json.loads(store.data["shop.web"]), "shop.web")
    assert uid == "uid-shop" and state.recommendations == [Recommendation(3, T0 + 45.0)]


def test_a_store_that_fails_is_reported_once_and_tried_again_a_period_later(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Store(failure="cannot write ConfigMap kubetide/kubetide-hpa-memory: forbidden")
    cluster, driver, published = setup(store)
    cluster.add("shop", replicas=3, usage=500)
    with caplog.at_level(logging.INFO, logger="kubetide.hpa"):
        for at in (0.0, 5.0, 15.0, 30.0):
            tick(cluster, driver, published, at)
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warnings == [
            "the HPAs' memory is not kept (cannot write ConfigMap kubetide/kubetide-hpa-memory: forbidden); "
            "it is tried again every period"
        ]
        assert published.page({})[1]["memoryStore"]["error"] == store.failure
        store.failure = None
        tick(cluster, driver, published, 45.0)
    assert store.writes == 1 and "the HPAs' memory is kept again" in caplog.records[-1].getMessage()
    assert published.page({})[1]["memoryStore"] == {
        "where": store.where,
        "writtenAt": "2026-05-28T20:27:25.000000Z",
        "error": None,
    }


def test_a_new_leader_decides_with_the_memory_the_last_one_kept() -> None:
    """6 replicas at 60% of target for a minute, then the load drops: the acting controller holds the
    scale-down for its 5-minute window. A controller taking over (a restart, a standby) restores the
    memory and holds it the same, where upstream's would seed the current count and start over."""
    store = Store()
    cluster, driver, published = setup(store)
    cluster.add("shop", replicas=6, usage=500)
    for at in (0.0, 15.0, 30.0, 45.0, 60.0):
        tick(cluster, driver, published, at)
    cluster.usage["shop"] = 100
    tick(cluster, driver, published, 75.0)
    assert cluster.replicas["shop"] == 6
    tick(cluster, driver, published, 90.0)  # written: a period after the last write

    successor = HPADriver(cluster, cluster, cluster, cluster, CONFIG)
    taking_over = PublishedState(CONFIG, store)
    taking_over.restore(successor)
    restored = taking_over.page({"hpa": "shop/web"})[1]
    assert restored["decision"] is None and restored["memory"]["recommendations"][0]["replicas"] == 6
    cluster.now = T0 + 300.0
    (done,) = successor.tick(T0 + 300.0)
    assert done.result is not None and not done.result.scaled and cluster.replicas["shop"] == 6
    norm = done.result.normalization
    assert norm is not None and (norm.proposal, norm.stabilized) == (2, 6)
    assert norm.stabilization_reason == "ScaleDownStabilized"
    assert done.decision is not None
    assert done.decision.remembered.recommendations is not None
    assert Recommendation(6, T0 + 60.0) in done.decision.remembered.recommendations
    cluster.now = T0 + 361.0
    (later,) = successor.tick(T0 + 361.0)  # the window has passed the last 6
    assert later.result is not None and later.result.scaled and cluster.replicas["shop"] == 2


def test_restoring_names_what_it_cannot_read_and_a_failing_store_starts_afresh(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Store(failure="cannot read ConfigMap kubetide/kubetide-hpa-memory: forbidden")
    cluster, driver, published = setup(store)
    cluster.add("shop", replicas=6, usage=100)
    with caplog.at_level(logging.INFO, logger="kubetide.hpa"):
        published.restore(driver)
        assert "cannot restore the HPAs' memory (cannot read ConfigMap" in caplog.records[-1].getMessage()
        store.failure = None
        published.restore(driver)
        assert "no HPA memory to restore" in caplog.records[-1].getMessage()
        held = json.dumps(document(Remembered((Recommendation(6, T0 - 10.0),)), "uid-shop"))
        other = json.dumps(document(Remembered((Recommendation(6, T0 - 10.0),)), "uid-of-a-deleted-one"))
        store.data = {"shop.web": held, "old.web": other}
        published.restore(driver)
        assert caplog.records[-1].getMessage() == (
            "restored the memory of 2 HPAs from ConfigMap kubetide/kubetide-hpa-memory"
        )
    cluster.add("old", replicas=6, usage=100)  # the same name, another uid: not its memory
    tick(cluster, driver, published, 300.0)
    # shop's 6 is 310 s old: past the window, down it goes; old/web starts afresh, held by its seed.
    assert cluster.replicas == {"shop": 2, "old": 6}
    page = published.page({})[1]["hpas"]
    assert page["old/web"]["memory"]["uid"] == "uid-old"
