"""The watch cache: list then watch, 410 relist, reconnect after failures, lazy memoized views."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.kube import cache
from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ResourceKind
from kubetide.kube.rest import Backoff
from kubetide.testing.apiserver import FakeApi, obj, status

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


def test_410_gone_lists_again_and_failures_list_again() -> None:
    api = FakeApi()
    api.add("GET", PATH, _list("10", obj("a", "1")), _list("20", obj("y", "19")), _list("30", obj("z", "29")))
    inf = _informer(api)
    gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}
    api.add(
        "WATCH",
        PATH,
        [{"type": "ADDED", "object": obj("b", "11")}],
        httpx2.ReadError("connection reset"),
        [gone],
        _stop_after(inf),
    )
    inf.run()
    watches = [r.url.params["resourceVersion"] for r in api.requests if r.url.params.get("watch") == "true"]
    # After the stream ended: from 11. After the reset, a new list (what the outage changed is known
    # only from one; client-go's reflector relists after a failed watch too) at 20; after 410, at 30.
    assert watches == ["10", "11", "20", "30"]
    assert inf.views() == ["z"]
    assert inf.has_synced()


def test_a_failure_unsyncs_the_cache_until_it_has_listed_again(caplog: pytest.LogCaptureFixture) -> None:
    """An outage: the watch breaks, lists fail twice, then one succeeds. The cache is unsynced from
    the first failure until that list; the outage is logged once when it starts (one line, no
    traceback at info level) and once when it ends."""
    api = FakeApi()
    inf = _informer(api)
    seen: list[bool] = []

    def synced_now(answer: Any) -> Any:
        def respond(request: httpx2.Request) -> Any:
            seen.append(inf.has_synced())
            if isinstance(answer, Exception):
                raise answer
            return answer

        return respond

    api.add(
        "GET",
        PATH,
        _list("10", obj("a", "1")),
        synced_now(httpx2.ConnectError("connection refused")),
        synced_now(status(503, "ServiceUnavailable")),
        synced_now(_list("40", obj("b", "39"))),
    )
    api.add("WATCH", PATH, synced_now(httpx2.ReadError("connection reset")), _stop_after(inf))
    with caplog.at_level(logging.INFO, logger="kubetide.kube.cache"):
        inf.run()
    assert seen == [True, False, False, False]  # synced while watching; unsynced until the list answered
    assert inf.has_synced() and inf.views() == ["b"]
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in lines] == [
        "nodes: watch broken, listing again in 0.0s: 0 ReadError: connection reset"
    ]
    assert all(r.exc_info is None for r in caplog.records)
    assert any(r.getMessage().startswith("nodes: synced again after") for r in caplog.records)


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


PODS = ResourceKind("", "v1", "Pod", "pods", namespaced=True)


def test_a_bookmarks_empty_pod_does_not_stop_the_watch() -> None:
    # A real 1.20 server sends BOOKMARK events whose object is an empty Pod with "containers": null,
    # which the cache's schema (containers: a list) rejects. The watch must go on past it.
    api = FakeApi()
    path = "/api/v1/pods"
    api.add("GET", path, (200, {"kind": "PodList", "metadata": {"resourceVersion": "10"}, "items": []}))
    informer: Informer[Any] = Informer(
        api.rest(), PODS, lambda o: o["metadata"]["name"], backoff=Backoff(base=0.0, jitter=0.0)
    )
    bookmark = {
        "kind": "Pod",
        "metadata": {"resourceVersion": "20"},
        "spec": {"containers": None},
        "status": {},
    }
    pod = obj("p", "21")
    pod["metadata"]["namespace"] = "default"
    pod["spec"] = {"containers": [{"name": "c"}]}
    api.add(
        "WATCH",
        path,
        [{"type": "BOOKMARK", "object": bookmark}, {"type": "ADDED", "object": pod}],
        _stop_after(informer),
    )
    informer.run()
    assert informer.views() == ["p"]
    watches = [r for r in api.requests if r.url.params.get("watch") == "true"]
    assert len(watches) == 2 and watches[1].url.params["resourceVersion"] == "21"


_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["ADDED", "MODIFIED", "DELETED", "views", "relist"]),
        st.integers(0, 7),  # which object
        st.sampled_from([True, True, True, False]),  # whether it converts
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(initial=st.lists(st.booleans(), max_size=8), events=_EVENTS, few=st.sampled_from([0, 2, 64]))
def test_patched_views_equal_a_full_conversion_of_the_store(
    initial: list[bool], events: list[tuple[str, int, bool]], few: int
) -> None:
    """Views patched after watch events are the views a fresh conversion of the store gives, in its
    order, whatever mix of updates, deletions, re-additions, failures and relists came first."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache, "_FEW_CHANGES", few)
        patch.setattr(cache.log, "disabled", True)
        _check_patched_views(initial, events)


def _check_patched_views(initial: list[bool], events: list[tuple[str, int, bool]]) -> None:

    def convert(o: dict[str, Any]) -> str:
        if (o["metadata"].get("labels") or {}).get("bad"):
            raise ValueError("malformed")
        return f"{o['metadata']['name']}@{o['metadata']['resourceVersion']}"

    def node(i: int, ok: bool, rv: int) -> dict[str, Any]:
        return _labelled(obj(f"n{i}", str(rv)), **({} if ok else {"bad": "yes"}))

    def group(view: str) -> str | None:  # an object's group changes with its version
        return (None, "a", "b")[int(view.rsplit("@", 1)[1]) % 3]

    api = FakeApi()
    api.add("GET", PATH, _list("10", *(node(i, ok, 1) for i, ok in enumerate(initial))))
    inf = Informer(api.rest(), NODES, convert, backoff=Backoff(base=0.0, jitter=0.0), index=group)
    api.add("WATCH", PATH, _stop_after(inf))
    inf.run()
    handed_out: list[tuple[dict[str, list[str]], Any]] = []
    rv = 100
    for kind, i, ok in events:
        rv += 1
        if kind == "views":
            views, groups = inf.views_and_index()
            handed_out.append(({k: list(v) for k, v in groups.items()}, groups))
        elif kind == "relist":
            api.add(
                "GET", PATH, _list(str(rv), *(o for o in inf.objects() if o["metadata"]["name"] != f"n{i}"))
            )
            inf._list()
        else:
            inf._apply({"type": kind, "object": node(i, ok, rv)}, str(rv))
    expected = []
    for o in inf.objects():
        with contextlib.suppress(ValueError):
            expected.append(convert(o))
    views, groups = inf.views_and_index()
    assert views == expected
    expected_groups: dict[str, list[str]] = {}
    for view in expected:
        name = group(view)
        if name is not None:
            expected_groups.setdefault(name, []).append(view)
    assert {k: list(v) for k, v in groups.items()} == expected_groups
    # What was handed out earlier is never changed by later events.
    for copied, kept in handed_out:
        assert {k: list(v) for k, v in kept.items()} == copied
