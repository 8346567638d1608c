"""The watch cache: list then watch, 410 relist, reconnect after failures, lazy memoized views."""

from __future__ import annotations

from typing import Any

import httpx2

from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ResourceKind
from kubetide.kube.rest import Backoff

from .fakeapi import FakeApi, obj, status

NODES = ResourceKind("", "v1", "Node", "nodes", namespaced=False)
PATH = "/api/v1/nodes"


def _list(rv: str, *items: dict[str, Any], cont: str = "") -> tuple[int, dict[str, Any]]:
    meta = {"resourceVersion": rv, **({"continue": cont} if cont else {})}
    return 200, {"kind": "NodeList", "metadata": meta, "items": list(items)}


def _labelled(o: dict[str, Any], **labels: str) -> dict[str, Any]:
    o["metadata"]["labels"] = labels
    return o


def _informer(api: FakeApi, convert: Any = lambda o: o["metadata"]["name"]) -> Informer[Any]:
    return Informer(api.rest(), NODES, convert, backoff=Backoff(base=0.0, jitter=0.0))


def _stop_after(informer: Informer[Any]) -> Any:
    def answer(request: httpx2.Request) -> list[Any]:
        informer._stop.set()
        return []

    return answer


def test_lists_in_pages_then_applies_watch_events_from_the_lists_version() -> None:
    api = FakeApi()
    api.add("GET", PATH, _list("", obj("a", "1"), cont="tok"), _list("10", obj("b", "2")))
    inf = _informer(api)
    api.add(
        "WATCH",
        PATH,
        [
            {"type": "ADDED", "object": obj("c", "11")},
            {"type": "MODIFIED", "object": obj("a", "12")},
            {"type": "DELETED", "object": obj("b", "13")},
            {"type": "BOOKMARK", "object": obj("", "20")},
        ],
        _stop_after(inf),
    )
    inf.run()
    assert inf.has_synced()
    assert sorted(inf.views()) == ["a", "c"]
    watches = [r for r in api.requests if r.url.params.get("watch") == "true"]
    assert watches[0].url.params["resourceVersion"] == "10"
    assert watches[1].url.params["resourceVersion"] == "20"  # the bookmark's version
    assert api.requests[1].url.params["continue"] == "tok"


def test_410_gone_lists_again_and_failures_reconnect_from_the_last_version() -> None:
    api = FakeApi()
    api.add("GET", PATH, _list("10", obj("a", "1")), _list("30", obj("z", "29")))
    inf = _informer(api)
    gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}
    api.add(
        "WATCH",
        PATH,
        [{"type": "ADDED", "object": obj("b", "11")}],
        httpx2.ReadError("connection reset"),
        status(500, "InternalError"),
        [gone],
        _stop_after(inf),
    )
    inf.run()
    watches = [r.url.params["resourceVersion"] for r in api.requests if r.url.params.get("watch") == "true"]
    # after the stream ended: from 11; after the reset and the 500: still 11; after 410: a new list at 30
    assert watches == ["10", "11", "11", "11", "30"]
    assert inf.views() == ["z"]


def test_views_are_memoized_per_resource_version_and_bad_objects_skipped() -> None:
    calls: list[str] = []

    def convert(o: dict[str, Any]) -> str:
        calls.append(o["metadata"]["name"])
        if (o["metadata"].get("labels") or {}).get("bad"):
            raise ValueError("malformed")
        return str(o["metadata"]["name"])

    api = FakeApi()
    api.add("GET", PATH, _list("10", obj("a", "1"), _labelled(obj("b", "2"), bad="yes")))
    inf = _informer(api, convert)
    api.add("WATCH", PATH, _stop_after(inf))
    inf.run()
    v0 = inf.version
    assert inf.views() == ["a"]
    assert inf.views() == ["a"]
    assert calls == ["a", "b"]  # converted once; the bad one is not retried at the same version
    inf._apply({"type": "MODIFIED", "object": obj("a", "5")}, "10")
    assert inf.version > v0
    assert inf.views() == ["a"]
    assert calls == ["a", "b", "a"]


def test_objects_are_trimmed_on_arrival() -> None:
    api = FakeApi()
    node = obj("a", "1", status={"images": [{"names": ["x"]}], "capacity": {"cpu": "1"}})
    node["metadata"]["managedFields"] = [{"manager": "kubelet"}]
    api.add("GET", PATH, _list("10", node))
    inf = _informer(api)
    api.add("WATCH", PATH, _stop_after(inf))
    inf.run()
    stored = inf.get("a")
    assert stored is not None
    assert "managedFields" not in stored["metadata"]
    assert stored["status"] == {"capacity": {"cpu": "1"}}


def test_stop_ends_the_thread() -> None:
    api = FakeApi()
    api.add("GET", PATH, _list("10"))
    api.add("WATCH", PATH, [])
    inf = _informer(api).start()
    assert inf.wait_synced(5.0)
    inf.stop(timeout=5.0)
    assert inf._thread is not None and not inf._thread.is_alive()
