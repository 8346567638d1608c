"""The node agent's lightkube adapter, checked on the wire: paths, patch types, bodies, error codes."""

from __future__ import annotations

import json

import httpx2
import pytest

from kubetide.live.agent.api import ApiError, LightkubeAgentApi
from kubetide.live.agent.nodes import lease_for
from kubetide.testing.lightkube_client import client_for, status

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "u1", "resourceVersion": "5"}}


def test_node_status_is_a_strategic_merge_patch_of_the_status_subresource() -> None:
    client, seen = client_for(lambda r: httpx2.Response(200, json=NODE))
    updated = LightkubeAgentApi(client).patch_node_status("n1", {"status": {"phase": "Running"}})
    request = seen.requests[0]
    assert (request.method, request.url.path) == ("PATCH", "/api/v1/nodes/n1/status")
    assert request.headers["content-type"] == "application/strategic-merge-patch+json"
    assert seen.body() == {"status": {"phase": "Running"}}
    assert updated["metadata"]["resourceVersion"] == "5"


def test_a_new_lease_keeps_six_fractional_digits_even_on_a_whole_second() -> None:
    client, seen = client_for(lambda r: httpx2.Response(201, json=json.loads(r.content)))
    LightkubeAgentApi(client).create_lease(lease_for(NODE, 1_800_000_000.0))
    request = seen.requests[0]
    assert (request.method, request.url.path) == (
        "POST",
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
    )
    body = seen.body()
    assert body["spec"]["renewTime"] == "2027-01-15T08:00:00.000001Z"
    assert body["metadata"]["ownerReferences"][0]["kind"] == "Node"


def test_lease_renewals_are_merge_patches_sent_verbatim() -> None:
    client, seen = client_for(
        lambda r: httpx2.Response(
            200, json={"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": {"name": "n1"}}
        )
    )
    LightkubeAgentApi(client).patch_lease("n1", {"spec": {"renewTime": "2027-01-15T08:00:00.000000Z"}})
    assert seen.requests[0].headers["content-type"] == "application/merge-patch+json"
    assert seen.body() == {"spec": {"renewTime": "2027-01-15T08:00:00.000000Z"}}


def test_pods_are_deleted_with_grace_period_zero() -> None:
    client, seen = client_for(lambda r: httpx2.Response(200, json={"kind": "Status", "apiVersion": "v1"}))
    LightkubeAgentApi(client).delete_pod_now("ns", "p")
    request = seen.requests[0]
    assert (request.method, request.url.path) == ("DELETE", "/api/v1/namespaces/ns/pods/p")
    assert request.url.params["gracePeriodSeconds"] == "0"


def test_a_missing_lease_is_none_and_errors_keep_their_code() -> None:
    client, _ = client_for(lambda r: status(404, "NotFound"))
    api = LightkubeAgentApi(client)
    assert api.get_lease("n1") is None
    with pytest.raises(ApiError) as info:
        api.patch_pod_status("ns", "p", {})
    assert info.value.code == 404


def test_an_expired_watch_raises_410() -> None:
    gone = {
        "type": "ERROR",
        "object": {"kind": "Status", "apiVersion": "v1", "code": 410, "message": "too old"},
    }
    client, seen = client_for(lambda r: httpx2.Response(200, content=json.dumps(gone).encode() + b"\n"))
    with pytest.raises(ApiError) as info:
        list(LightkubeAgentApi(client).watch_pods("12"))
    assert info.value.code == 410
    assert seen.requests[0].url.params["resourceVersion"] == "12"
    assert seen.requests[0].url.params["watch"] == "true"


def test_lists_carry_the_selector_and_the_resource_version() -> None:
    listing = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "42"}, "items": [NODE]}
    client, seen = client_for(lambda r: httpx2.Response(200, json=listing))
    items, version = LightkubeAgentApi(client).list_nodes("kubetide.io/node-group")
    assert version == "42" and items[0]["metadata"]["name"] == "n1"
    assert seen.requests[0].url.params["labelSelector"] == "kubetide.io/node-group"


def test_unreachable_servers_are_code_0() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    client, _ = client_for(refuse)
    with pytest.raises(ApiError) as info:
        LightkubeAgentApi(client).list_pods()
    assert info.value.code == 0
