"""The HPA source: kubetide's CRD or the standard HPAs (v2, else v2beta2), malformed objects reported
without stopping the others, conflicting pairs found, status written with conflicts retried."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from kubetide.hpa.driver import HPASourceError, StatusWriteError
from kubetide.live.hpa.hpas import CONFLICT_REASON, ApiHPAObjects
from kubetide.live.hpa.loop_source import LoopHPASource
from kubetide.testing.hpa_server import FakeServer, status

CRD = "/apis/autoscaling.kubetide.io/v1/horizontalpodautoscalers"
V2B2 = "/apis/autoscaling/v2beta2/horizontalpodautoscalers"
GROUP_120 = {
    "kind": "APIGroup",
    "name": "autoscaling",
    "versions": [{"groupVersion": f"autoscaling/{v}", "version": v} for v in ("v1", "v2beta1", "v2beta2")],
}


def hpa(name: str, api_version: str, target: str = "web", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}", "resourceVersion": "10"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                }
            ],
            **spec,
        },
    }


def items(*objects: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "List", "metadata": {}, "items": list(objects)}


def test_crd_listing_converts_reports_bad_objects_and_reads_sync_period() -> None:
    bad = hpa("bad", "autoscaling.kubetide.io/v1", maxReplicas="ten")
    slow = hpa("slow", "autoscaling.kubetide.io/v1", target="api", syncPeriod="30s")
    bad_period = hpa("bad-period", "autoscaling.kubetide.io/v1", target="x", syncPeriod="soon")
    server = (
        FakeServer()
        .on("GET", CRD, items(hpa("web", "autoscaling.kubetide.io/v1"), bad, slow, bad_period))
        .on("GET", "/apis/autoscaling", GROUP_120)
        .on("GET", V2B2, items())
    )
    listing = ApiHPAObjects(server.api()).list_hpas()
    assert [(e.hpa.key, e.sync_period) for e in listing.entries] == [("shop/web", None), ("shop/slow", 30.0)]
    web = listing.entries[0]
    assert web.hpa.scale_target_ref.kind == "Deployment" and web.hpa.metrics[0].target is not None
    assert web.ref.api_version == "autoscaling.kubetide.io/v1" and web.ref.uid == "uid-web"
    assert [(p.ref.key, p.message) for p in listing.problems] == [
        (
            "shop/bad",
            "invalid HorizontalPodAutoscaler shop/bad: spec.maxReplicas: must be an integer, got 'ten'",
        ),
        ("shop/bad-period", listing.problems[1].message),
    ]
    assert "spec.syncPeriod" in listing.problems[1].message
    assert listing.conflicts == [] and listing.notes == []


def test_standard_hpas_discover_v2beta2_and_pair_conflicts() -> None:
    server = (
        FakeServer()
        .on("GET", "/apis/autoscaling", GROUP_120)
        .on(
            "GET",
            V2B2,
            items(hpa("std", "autoscaling/v2beta2"), hpa("alone", "autoscaling/v2beta2", target="api")),
        )
        .on("GET", CRD, items(hpa("mine", "autoscaling.kubetide.io/v1")))
    )
    source = ApiHPAObjects(server.api(), standard=True)
    listing = source.list_hpas()
    assert source.api_version == "autoscaling/v2beta2"
    assert [e.hpa.key for e in listing.entries] == ["shop/std", "shop/alone"]
    [conflict] = listing.conflicts
    assert (conflict.kubetide.key, conflict.standard.key, conflict.target) == (
        "shop/mine",
        "shop/std",
        "Deployment/web",
    )
    assert "Deployment/web is scaled by both" in conflict.message and CONFLICT_REASON == "ConflictingHPA"
    # The same pair seen from the CRD side.
    crd_listing = ApiHPAObjects(server.api()).list_hpas()
    assert [(c.kubetide.key, c.standard.key) for c in crd_listing.conflicts] == [("shop/mine", "shop/std")]


def test_missing_crd_or_forbidden_standard_listing_only_skips_the_conflict_check() -> None:
    server = (
        FakeServer()
        .on("GET", "/apis/autoscaling", GROUP_120)
        .on("GET", V2B2, items(hpa("std", "autoscaling/v2beta2")))
    )
    listing = ApiHPAObjects(server.api(), standard=True).list_hpas()  # CRD not installed: 404
    assert [e.hpa.key for e in listing.entries] == ["shop/std"] and listing.notes == []
    server.on("GET", CRD, items()).on("GET", V2B2, status(403, "forbidden"))
    notes = ApiHPAObjects(server.api()).list_hpas().notes
    assert notes and "conflicting HPAs not checked" in notes[0]


def test_no_usable_standard_version_and_listing_failures_are_errors() -> None:
    server = FakeServer().on("GET", "/apis/autoscaling", {"versions": [{"version": "v1"}]})
    with pytest.raises(HPASourceError, match="serves none of autoscaling/v2, autoscaling/v2beta2"):
        ApiHPAObjects(server.api(), standard=True).list_hpas()
    server = FakeServer().on("GET", CRD, status(403, "forbidden: nope"))
    with pytest.raises(HPASourceError, match="forbidden: nope"):
        ApiHPAObjects(server.api()).list_hpas()


def test_listing_follows_continue_tokens() -> None:
    pages = iter(
        [
            {"metadata": {"continue": "t1"}, "items": [hpa("a", "autoscaling.kubetide.io/v1")]},
            {"metadata": {}, "items": [hpa("b", "autoscaling.kubetide.io/v1", target="b")]},
        ]
    )
    server = (
        FakeServer().on("GET", CRD, lambda r: (200, next(pages))).on("GET", "/apis/autoscaling", GROUP_120)
    )
    server.on("GET", V2B2, items())
    assert [e.hpa.name for e in ApiHPAObjects(server.api()).list_hpas().entries] == ["a", "b"]
    assert [r.url.params.get("continue") for r in server.requests if r.url.path == CRD] == [None, "t1"]


def test_write_status_sends_the_listed_object_and_retries_a_conflict() -> None:
    puts: list[dict[str, Any]] = []

    def put(request: httpx2.Request) -> tuple[int, Any]:
        body = json.loads(request.content)
        puts.append(body)
        if len(puts) == 1:
            return status(409, "the object has been modified", "Conflict")
        return 200, body

    fresh = hpa("web", "autoscaling/v2beta2")
    fresh["metadata"]["resourceVersion"] = "11"
    server = (
        FakeServer()
        .on("GET", "/apis/autoscaling", GROUP_120)
        .on("GET", V2B2, items(hpa("web", "autoscaling/v2beta2")))
        .on("GET", f"{V2B2.replace('/horizontal', '/namespaces/shop/horizontal')}/web", fresh)
        .on("PUT", "/apis/autoscaling/v2beta2/namespaces/shop/horizontalpodautoscalers/web/status", put)
    )
    source = ApiHPAObjects(server.api(), standard=True)
    source.list_hpas()
    new_status = {"currentReplicas": 2, "desiredReplicas": 3, "conditions": []}
    source.write_status("shop/web", new_status)
    assert [(p["metadata"]["resourceVersion"], p["status"]) for p in puts] == [
        ("10", new_status),
        ("11", new_status),
    ]
    assert puts[0]["spec"]["maxReplicas"] == 10  # the whole object, as client-go's UpdateStatus sends it
    server.on(
        "PUT",
        "/apis/autoscaling/v2beta2/namespaces/shop/horizontalpodautoscalers/web/status",
        status(422, "invalid"),
    )
    with pytest.raises(StatusWriteError, match="writing the status of shop/web: invalid"):
        source.write_status("shop/web", new_status)


def test_conflict_events_name_each_hpa_in_its_own_api_version_with_its_uid() -> None:
    server = (
        FakeServer()
        .on("GET", "/apis/autoscaling", GROUP_120)
        .on("GET", V2B2, items(hpa("std", "autoscaling/v2beta2")))
        .on("GET", CRD, items(hpa("mine", "autoscaling.kubetide.io/v1")))
    )
    emitted: list[tuple[str, str]] = []

    class Events:
        def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
            emitted.append((reason, obj))

    for standard, own, other in (
        (False, "HorizontalPodAutoscaler/shop/mine", "HorizontalPodAutoscaler.v2beta2.autoscaling/shop/std"),
        (
            True,
            "HorizontalPodAutoscaler/shop/std",
            "HorizontalPodAutoscaler.v1.autoscaling.kubetide.io/shop/mine",
        ),
    ):
        emitted.clear()
        source = ApiHPAObjects(server.api(), standard=standard)
        LoopHPASource(source, Events()).list_hpas()
        assert sorted(emitted) == sorted([(CONFLICT_REASON, own), (CONFLICT_REASON, other)])
        other_name = other.rpartition("/")[2]
        assert source.other_uid("shop", other_name) == f"uid-{other_name}"
