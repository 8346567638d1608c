"""An in-memory HTTP server for the live HPA's tests: routes by (method, path) to JSON answers, over
httpx2's MockTransport, recording every request so tests can assert what was asked."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from kubetide.live.hpa.api import KubeApi

Handler = Callable[[httpx2.Request], tuple[int, Any]]


@dataclass
class FakeServer:
    routes: dict[tuple[str, str], Handler | tuple[int, Any]] = field(default_factory=dict)
    requests: list[httpx2.Request] = field(default_factory=list)

    def on(self, method: str, path: str, answer: Handler | tuple[int, Any] | Any) -> FakeServer:
        self.routes[(method, path)] = (
            answer if callable(answer) or isinstance(answer, tuple) else (200, answer)
        )
        return self

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        answer = self.routes.get((request.method, request.url.path))
        if answer is None:
            return httpx2.Response(
                404,
                json={
                    "kind": "Status",
                    "message": "the server could not find the requested resource",
                    "code": 404,
                },
            )
        status, body = answer(request) if callable(answer) else answer
        if isinstance(body, Exception):
            raise body
        if isinstance(body, str):
            return httpx2.Response(status, text=body)
        return httpx2.Response(status, json=body)

    def client(self, base_url: str = "https://kube.test") -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handle), base_url=base_url)

    def api(self) -> KubeApi:
        return KubeApi(self.client())

    def params(self, index: int = -1) -> dict[str, str]:
        return dict(self.requests[index].url.params)

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)


def status(code: int, message: str, reason: str = "") -> tuple[int, Any]:
    return code, {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
