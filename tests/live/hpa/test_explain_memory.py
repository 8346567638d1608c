"""Where `hpa explain --cluster` finds the controller's memory: its ConfigMap, or its /debug/hpa; and
what it says when there is none (a controller that just started, and why)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from kubetide.hpa.state import Recommendation
from kubetide.live.hpa.explain_inputs import (
    ControllerUnreachable,
    memory_from_configmap,
    memory_from_controller,
)
from kubetide.model.hpa import HPA
from kubetide.testing.apiserver import FakeApi, status

NAME = "/api/v1/namespaces/kubetide/configmaps/kubetide-hpa-memory"
MEMORY = {"uid": "uid-web", "recommendations": [{"replicas": 5, "timestamp": "2026-05-28T20:26:40.000000Z"}]}
HPA_WEB = HPA.from_manifest(
    {
        "metadata": {"name": "web", "namespace": "shop", "uid": "uid-web"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5},
    }
)


def from_configmap(api: FakeApi) -> Any:
    return memory_from_configmap(api.rest(), "kubetide", "kubetide-hpa-memory", HPA_WEB)


def configmap(data: dict[str, str]) -> tuple[int, dict[str, Any]]:
    return 200, {"metadata": {"name": "kubetide-hpa-memory", "resourceVersion": "3"}, "data": data}


def test_the_configmap_gives_the_hpas_memory() -> None:
    found = from_configmap(FakeApi().add("GET", NAME, configmap({"shop.web": json.dumps(MEMORY)})))
    assert found.found and found.state.recommendations == [Recommendation(5, 1_780_000_000.0)]
    assert found.source == "ConfigMap kubetide/kubetide-hpa-memory"


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (status(404, "NotFound"), "ConfigMap kubetide/kubetide-hpa-memory not found"),
        (
            status(403, "Forbidden", 'configmaps "kubetide-hpa-memory" is forbidden: User "dev" cannot get'),
            'cannot read ConfigMap kubetide/kubetide-hpa-memory: configmaps "kubetide-hpa-memory" is forbidden',
        ),
        (
            configmap({"shop.api": json.dumps(MEMORY)}),
            "ConfigMap kubetide/kubetide-hpa-memory has no memory of shop/web",
        ),
        (
            configmap({"shop.web": "{"}),
            "ConfigMap kubetide/kubetide-hpa-memory has no memory of shop/web: "
            "ConfigMap kubetide/kubetide-hpa-memory data[shop.web]: not JSON",
        ),
        (
            configmap({"shop.web": json.dumps({**MEMORY, "uid": "uid-old"})}),
            "ConfigMap kubetide/kubetide-hpa-memory remembers another HPA of that name (uid uid-old",
        ),
    ],
)
def test_without_a_memory_it_says_why_and_explains_a_controller_that_just_started(
    answer: tuple[int, Any], why: str
) -> None:
    found = from_configmap(FakeApi().add("GET", NAME, answer))
    assert not found.found and found.state.recommendations is None
    assert found.source.startswith(f"none ({why}")
    assert found.source.endswith("): explained as a controller that just started")


def controller(answer: httpx2.Response | Exception, seen: list[httpx2.Request]) -> httpx2.Client:
    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx2.Client(transport=httpx2.MockTransport(handle))


def test_the_running_controller_gives_its_memory_now() -> None:
    seen: list[httpx2.Request] = []
    answer = httpx2.Response(200, json={"hpa": "shop/web", "memory": MEMORY, "decision": None})
    with controller(answer, seen) as client:
        found = memory_from_controller("http://127.0.0.1:8086/", HPA_WEB, client)
    assert found.found and found.state.recommendations == [Recommendation(5, 1_780_000_000.0)]
    assert str(seen[0].url) == "http://127.0.0.1:8086/debug/hpa?hpa=shop%2Fweb"
    with controller(httpx2.Response(404, json={"error": "no HPA shop/web"}), seen) as client:
        none = memory_from_controller("http://127.0.0.1:8086", HPA_WEB, client)
    assert not none.found and "the controller at http://127.0.0.1:8086 has no HPA shop/web" in none.source


@pytest.mark.parametrize(
    "answer",
    [
        httpx2.ConnectError("connection refused"),
        httpx2.Response(200, text="<html>not the controller</html>"),
        httpx2.Response(500, json={"error": "boom"}),
        httpx2.Response(200, json={"hpa": "shop/web", "memory": {"recommendations": "many"}}),
    ],
)
def test_an_address_that_is_not_the_controller_is_an_error(answer: httpx2.Response | Exception) -> None:
    with (
        controller(answer, []) as client,
        pytest.raises(ControllerUnreachable, match="--controller-address: "),
    ):
        memory_from_controller("http://127.0.0.1:8086", HPA_WEB, client)
