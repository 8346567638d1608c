"""The scale-target port: the scale subresource through the API (built-in kinds and discovered ones),
conflicts retried, errors as ScaleError, and the pod lister's identity contract."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx2
import pytest

from kubetide.hpa.ports import Scale, ScaleError
from kubetide.live.hpa.scale import ApiScaleTargets
from kubetide.model.hpa import CrossVersionObjectReference as Ref
from kubetide.model.pod import Pod
from kubetide.model.selectors import parse_selector_string
from kubetide.testing.hpa_server import FakeServer, status

DEPLOY = "/apis/apps/v1/namespaces/shop/deployments/web/scale"


def scale_body(spec: int, status_: int, rv: str = "7", selector: str = "app=web") -> dict[str, Any]:
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": rv},
        "spec": {"replicas": spec},
        "status": {"replicas": status_, "selector": selector},
    }


class Store:
    def __init__(self, pods: list[Pod]) -> None:
        self._pods, self._version = pods, 0

    def pods(self, namespace: str) -> Sequence[Pod]:
        return [p for p in self._pods if p.namespace == namespace]

    def version(self, namespace: str) -> int:
        return self._version

    def replace(self, index: int, pod: Pod) -> None:
        self._pods[index] = pod
        self._version += 1


def pod(name: str, app: str, phase: str = "Running") -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "shop", "labels": {"app": app}},
            "spec": {"containers": []},
            "status": {"phase": phase},
        }
    )


def test_get_scale_of_built_in_kinds() -> None:
    server = (
        FakeServer()
        .on("GET", DEPLOY, scale_body(3, 2))
        .on("GET", "/api/v1/namespaces/shop/replicationcontrollers/old/scale", scale_body(1, 1, selector=""))
        .on("GET", "/apis/apps/v1/namespaces/shop/statefulsets/db/scale", scale_body(5, 5))
    )
    targets = ApiScaleTargets(server.api(), Store([]))
    assert targets.get_scale("shop", Ref("Deployment", "web", "apps/v1")) == Scale(3, 2, "app=web")
    assert targets.get_scale("shop", Ref("ReplicationController", "old", "v1")) == Scale(1, 1, "")
    assert targets.get_scale("shop", Ref("StatefulSet", "db", "apps/v1")).spec_replicas == 5


def test_update_writes_the_read_scale_and_retries_a_conflict() -> None:
    puts: list[dict[str, Any]] = []

    def put(request: httpx2.Request) -> tuple[int, Any]:
        import json

        body = json.loads(request.content)
        puts.append(body)
        if len(puts) == 1:
            return status(
                409,
                'Operation cannot be fulfilled on deployments.apps "web": the object has been modified',
                "Conflict",
            )
        return 200, body

    reads = iter([scale_body(3, 3, rv="7"), scale_body(3, 3, rv="8")])
    server = FakeServer().on("GET", DEPLOY, lambda r: (200, next(reads))).on("PUT", DEPLOY, put)
    targets = ApiScaleTargets(server.api(), Store([]))
    ref = Ref("Deployment", "web", "apps/v1")
    targets.get_scale("shop", ref)
    targets.update_scale("shop", ref, 6)
    assert [(p["metadata"]["resourceVersion"], p["spec"]["replicas"]) for p in puts] == [("7", 6), ("8", 6)]


def test_errors_are_scale_errors_with_the_api_message() -> None:
    server = FakeServer().on("GET", DEPLOY, status(404, 'deployments.apps "web" not found', "NotFound"))
    targets = ApiScaleTargets(server.api(), Store([]))
    with pytest.raises(ScaleError, match=r'^deployments.apps "web" not found$'):
        targets.get_scale("shop", Ref("Deployment", "web", "apps/v1"))
    server.on("GET", DEPLOY, scale_body(1, 1)).on("PUT", DEPLOY, status(403, "forbidden: no"))
    targets.get_scale("shop", Ref("Deployment", "web", "apps/v1"))
    with pytest.raises(ScaleError, match="forbidden: no"):
        targets.update_scale("shop", Ref("Deployment", "web", "apps/v1"), 2)
    conflict = status(409, "the object has been modified")
    server.on("PUT", DEPLOY, conflict)
    with pytest.raises(ScaleError, match="the object has been modified"):
        targets.update_scale("shop", Ref("Deployment", "web", "apps/v1"), 2)


def test_other_kinds_through_discovery_of_their_scale_subresource() -> None:
    discovery = {
        "kind": "APIResourceList",
        "groupVersion": "example.com/v1",
        "resources": [
            {"name": "widgets", "kind": "Widget", "namespaced": True},
            {"name": "widgets/scale", "kind": "Scale", "group": "autoscaling", "version": "v1"},
            {"name": "gadgets", "kind": "Gadget", "namespaced": True},
        ],
    }
    server = (
        FakeServer()
        .on("GET", "/apis/example.com/v1", discovery)
        .on("GET", "/apis/example.com/v1/namespaces/shop/widgets/w/scale", scale_body(2, 2))
    )
    targets = ApiScaleTargets(server.api(), Store([]))
    assert targets.get_scale("shop", Ref("Widget", "w", "example.com/v1")) == Scale(2, 2, "app=web")
    targets.get_scale("shop", Ref("Widget", "w", "example.com/v1"))
    assert [r.url.path for r in server.requests].count("/apis/example.com/v1") == 1  # cached
    with pytest.raises(ScaleError, match=r"gadgets.example.com has no scale subresource"):
        targets.get_scale("shop", Ref("Gadget", "g", "example.com/v1"))
    with pytest.raises(ScaleError, match=r"no matches for kind 'Thing' in version example.com/v1"):
        targets.get_scale("shop", Ref("Thing", "t", "example.com/v1"))
    with pytest.raises(ScaleError, match="unable to determine resource"):
        targets.get_scale("shop", Ref("Widget", "w", "missing.io/v1"))


def test_list_pods_keeps_the_same_sequence_while_matching_pods_are_unchanged() -> None:
    store = Store([pod("web-1", "web"), pod("web-2", "web"), pod("db-1", "db")])
    targets = ApiScaleTargets(FakeServer().api(), store)
    web = parse_selector_string("app=web")
    first = targets.list_pods("shop", web)
    assert [p.name for p in first] == ["web-1", "web-2"]
    assert targets.list_pods("shop", web) is first
    store.replace(2, pod("db-1", "db", "Pending"))  # another workload's pod changed: same answer object
    assert targets.list_pods("shop", web) is first
    store.replace(0, pod("web-1", "web", "Pending"))
    second = targets.list_pods("shop", web)
    assert second is not first and second[0].phase == "Pending"
    assert targets.list_pods("shop", web) is second
    assert targets.list_pods("other", web) == ()


def test_listed_pods_store_reads_views_and_skips_bad_pods() -> None:
    from kubetide.live.hpa.pods import ListedPods, PodLister

    good = {
        "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"containers": []},
        "status": {"phase": "Running"},
    }
    bad = {
        "metadata": {"name": "web-2", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"containers": []},
        "status": {"phase": "Sleeping"},
    }
    server = FakeServer().on("GET", "/api/v1/namespaces/shop/pods", {"items": [good, bad]})
    store = ListedPods(server.api())
    lister = PodLister(store)
    web = parse_selector_string("app=web")
    first = lister.list_pods("shop", web)
    assert [p.name for p in first] == ["web-1"] and "pod shop/web-2" in store.problems[0]
    assert lister.list_pods("shop", web) is first and len(server.requests) == 1
    store.refresh()
    assert lister.list_pods("shop", web) is not first and len(server.requests) == 2
    assert ListedPods(FakeServer().api()).pods("gone") == ()
