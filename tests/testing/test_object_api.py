"""The in-process API server: what a watch cache sees of its objects over HTTP (list, then every
change, a field selector's DELETED, bookmarks), optimistic concurrency, merge patches, mirrors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ResourceKind, discover
from kubetide.kube.rest import KubeStatusError
from kubetide.testing.object_api import LoopbackApiServer, ObjectApi

RESOURCES = (
    ResourceKind("", "v1", "Pod", "pods"),
    ResourceKind("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    ResourceKind("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets"),
    ResourceKind("coordination.k8s.io", "v1", "Lease", "leases"),
)
PODS = ResourceKind("", "v1", "Pod", "pods")


def pod(name: str, phase: str = "Pending", uid: str = "", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels}
    if uid:
        meta["uid"] = uid
    return {"metadata": meta, "spec": {"containers": []}, "status": {"phase": phase}}


@pytest.fixture
def server() -> Iterator[LoopbackApiServer]:
    server = LoopbackApiServer(ObjectApi(RESOURCES)).start()
    try:
        yield server
    finally:
        server.stop()


def caught_up(informer: Informer[Any], api: ObjectApi) -> None:
    """Wait (with a deadline) until the informer has seen everything up to a fresh bookmark."""
    version = api.bookmark()
    deadline = time.monotonic() + 10.0
    while int(informer.resource_version or 0) < version:
        assert time.monotonic() < deadline, f"the informer stayed at {informer.resource_version}"
        time.sleep(0.001)


def names(informer: Informer[Any]) -> list[str]:
    return [o["metadata"]["name"] for o in informer.objects()]


def test_a_watch_cache_lists_then_follows_every_change_in_order(server: LoopbackApiServer) -> None:
    api = server.api
    api.put("pods", pod("a"))
    informer: Informer[Any] = Informer(server.rest(), PODS, lambda o: o)
    informer.start()
    try:
        assert informer.wait_synced(10.0)
        assert names(informer) == ["a"]
        api.put("pods", pod("b"))
        api.put("pods", pod("a", "Running"))
        api.delete("pods", "default", "b")
        api.put("pods", pod("c"))
        caught_up(informer, api)
        assert names(informer) == ["a", "c"]
        assert informer.get("default/a")["status"]["phase"] == "Running"  # type: ignore[index]
        assert informer.resource_version == str(api.resource_version)
    finally:
        informer.stop()


def test_an_object_that_stops_matching_a_field_selector_is_deleted_for_that_watch(
    server: LoopbackApiServer,
) -> None:
    api = server.api
    api.put("pods", pod("job", "Running"))
    informer: Informer[Any] = Informer(
        server.rest(), PODS, lambda o: o, field_selector="status.phase!=Succeeded,status.phase!=Failed"
    )
    informer.start()
    try:
        assert informer.wait_synced(10.0)
        api.put("pods", pod("done", "Succeeded"))
        api.put("pods", pod("job", "Succeeded"))
        caught_up(informer, api)
        assert names(informer) == []
        api.put("pods", pod("next"))
        caught_up(informer, api)
        assert names(informer) == ["next"]
    finally:
        informer.stop()


def test_a_mirror_adds_modifies_deletes_and_replaces_an_object_whose_uid_changed(
    server: LoopbackApiServer,
) -> None:
    api = server.api
    api.mirror("pods", [pod("a", uid="1"), pod("b", uid="2"), pod("c", uid="3")])
    informer: Informer[Any] = Informer(server.rest(), PODS, lambda o: o)
    informer.start()
    try:
        assert informer.wait_synced(10.0)
        unchanged = api.resource_version
        api.mirror("pods", [pod("a", uid="1"), pod("b", uid="2"), pod("c", uid="3")])
        assert api.resource_version == unchanged  # nothing changed: no event
        # b is a new object of the same name (its uid changed): it goes to the end, as in a cache.
        api.mirror("pods", [pod("a", "Running", uid="1"), pod("b", uid="4"), pod("d", uid="5")])
        caught_up(informer, api)
        assert names(informer) == ["a", "b", "d"]
        assert [o["metadata"]["name"] for o in api.list("pods")] == ["a", "b", "d"]
    finally:
        informer.stop()


def test_a_stale_write_is_a_conflict_and_a_merge_patch_touches_only_its_keys(
    server: LoopbackApiServer,
) -> None:
    rest = server.rest()
    created = rest.request("POST", "/api/v1/namespaces/default/pods", body=pod("a", app="web"))
    path = "/api/v1/namespaces/default/pods/a"
    rest.request("PUT", path, body={**created, "status": {"phase": "Running"}})
    with pytest.raises(KubeStatusError) as stale:
        rest.request("PUT", path, body={**created, "status": {"phase": "Failed"}})
    assert stale.value.status == 409 and stale.value.reason == "Conflict"
    patched = rest.request(
        "PATCH",
        path,
        body={"metadata": {"labels": {"tier": "front", "app": None}}},
        content_type="application/merge-patch+json",
    )
    assert patched["metadata"]["labels"] == {"tier": "front"} and patched["status"] == {"phase": "Running"}
    with pytest.raises(KubeStatusError) as exists:
        rest.request("POST", "/api/v1/namespaces/default/pods", body=pod("a"))
    assert exists.value.status == 409
    with pytest.raises(KubeStatusError) as missing:
        rest.request("GET", "/api/v1/namespaces/default/pods/nope")
    assert missing.value.status == 404


def test_lists_filter_by_label_and_discovery_serves_the_groups(server: LoopbackApiServer) -> None:
    api, rest = server.api, server.rest()
    api.put("pods", pod("a", app="web"))
    api.put("pods", pod("b", app="db"))
    listed = rest.request("GET", "/api/v1/namespaces/default/pods", params={"labelSelector": "app=web"})
    assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
    assert listed["metadata"]["resourceVersion"] == str(api.resource_version)
    versions = discover(rest)
    assert (versions.autoscaling, versions.policy, versions.coordination) == ("v2", "v1", "v1")
