"""An httpx2 MockTransport that answers like the API server, scripted per test.

Each route is (method, path), watches as ("WATCH", path), -> a list of answers consumed in order (the last one repeats);
an answer is a (status, body) pair, a list of watch events (a streamed 200), or an exception to raise
(a dropped connection). Every request is recorded for the test to inspect.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from kubetide.kube.rest import Rest

Answer = Any


@dataclass
class FakeApi:
    routes: dict[tuple[str, str], list[Answer]] = field(default_factory=dict)
    requests: list[httpx2.Request] = field(default_factory=list)
    on_exhausted: Callable[[], None] | None = None

    def add(self, method: str, path: str, *answers: Answer) -> FakeApi:
        self.routes.setdefault((method, path), []).extend(answers)
        return self

    def rest(self) -> Rest:
        return Rest(httpx2.Client(transport=httpx2.MockTransport(self.handle), base_url="https://k8s.test"))

    def bodies(self, method: str, path: str) -> list[Any]:
        return [json.loads(r.content) for r in self.requests if r.method == method and r.url.path == path]

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        key = (request.method, request.url.path)
        if request.url.params.get("watch") == "true":
            key = ("WATCH", request.url.path)
        answers = self.routes.get(key)
        if not answers:
            if self.on_exhausted is not None:
                self.on_exhausted()
            return httpx2.Response(404, json={"kind": "Status", "reason": "NotFound", "code": 404})
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            answer = answer(request)
        if isinstance(answer, list):
            lines = b"".join(json.dumps(e).encode() + b"\n" for e in answer)
            return httpx2.Response(200, content=lines)
        status, body = answer
        headers = {"Retry-After": "0"} if status == 429 else {}
        return httpx2.Response(status, json=body, headers=headers)


def status(code: int, reason: str, message: str = "") -> tuple[int, dict[str, Any]]:
    return code, {"kind": "Status", "status": "Failure", "reason": reason, "code": code, "message": message}


def obj(name: str, rv: str, namespace: str | None = None, **fields: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": rv, "uid": f"uid-{name}"}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, **fields}
