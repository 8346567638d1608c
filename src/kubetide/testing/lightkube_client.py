"""A lightkube client over an httpx2 MockTransport, recording each request, for the adapters' tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig

Handler = Callable[[httpx2.Request], httpx2.Response]


class Recorder:
    def __init__(self, handler: Handler) -> None:
        self.requests: list[httpx2.Request] = []
        self._handler = handler

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self._handler(request)

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)


def client_for(handler: Handler) -> tuple[Client, Recorder]:
    recorder = Recorder(handler)
    config = KubeConfig.from_dict(
        {
            "clusters": [{"name": "c", "cluster": {"server": "http://api.test"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "current-context": "c",
        }
    )
    return Client(config=config, transport=httpx2.MockTransport(recorder), field_manager="test"), recorder


def status(code: int, reason: str = "") -> httpx2.Response:
    return httpx2.Response(
        code,
        json={
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "code": code,
            "reason": reason,
            "message": reason,
        },
    )
