"""The kwok provider's lightkube adapter on the wire: Node creation, the state ConfigMap's optimistic
writes, and HTTP failures as KubeCallError with their code."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import pytest
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig

from kubetide.live.providers.kwok.api import KubeCallError, LightkubeKwokApi


def api_for(
    handler: Callable[[httpx2.Request], httpx2.Response],
) -> tuple[LightkubeKwokApi, list[httpx2.Request]]:
    seen: list[httpx2.Request] = []

    def record(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return handler(request)

    config = KubeConfig.from_dict(
        {
            "clusters": [{"name": "c", "cluster": {"server": "http://api.test"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "current-context": "c",
        }
    )
    client = Client(config=config, transport=httpx2.MockTransport(record), field_manager="test")
    return LightkubeKwokApi(client), seen


def failure(code: int) -> httpx2.Response:
    return httpx2.Response(
        code, json={"kind": "Status", "apiVersion": "v1", "code": code, "message": f"code {code}"}
    )


def echo(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, json=json.loads(request.content))


def test_nodes_are_created_with_their_status() -> None:
    api, seen = api_for(echo)
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "g-abcde", "labels": {"kubetide.io/node-group": "g"}},
        "spec": {"providerID": "kwok://g/g-abcde"},
        "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "4"}},
    }
    api.create_node(node)
    assert (seen[0].method, seen[0].url.path) == ("POST", "/api/v1/nodes")
    assert json.loads(seen[0].content) == node


def test_the_state_is_replaced_with_its_resource_version_and_a_conflict_is_409() -> None:
    api, seen = api_for(lambda r: failure(409))
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kubetide-kwok-state", "namespace": "ops", "resourceVersion": "7"},
        "data": {"state": "{}"},
    }
    with pytest.raises(KubeCallError) as info:
        api.replace_configmap("ops", configmap)
    assert info.value.code == 409
    assert (seen[0].method, seen[0].url.path) == (
        "PUT",
        "/api/v1/namespaces/ops/configmaps/kubetide-kwok-state",
    )
    assert json.loads(seen[0].content)["metadata"]["resourceVersion"] == "7"


def test_a_missing_state_is_none_and_a_node_list_selects_the_group_label() -> None:
    api, seen = api_for(lambda r: failure(404))
    assert api.get_configmap("kube-system", "kubetide-kwok-state") is None
    listing = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": []}
    api, seen = api_for(lambda r: httpx2.Response(200, json=listing))
    assert api.list_nodes("kubetide.io/node-group") == []
    assert seen[0].url.params["labelSelector"] == "kubetide.io/node-group"


def test_server_errors_and_unreachable_servers_keep_their_code() -> None:
    api, _ = api_for(lambda r: failure(500))
    with pytest.raises(KubeCallError) as info:
        api.delete_node("n")
    assert info.value.code == 500

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    api, _ = api_for(refuse)
    with pytest.raises(KubeCallError) as info:
        api.list_nodes("x")
    assert info.value.code == 0
