"""The agent's plumbing: the reflector's relist on 410 and its store, Go durations, label selectors."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kubetide.live.agent.api import ApiError, Obj, WatchEvent, _parse_selector
from kubetide.live.agent.reflector import Reflector, Store
from kubetide.model.durations import DurationError, parse_duration


def obj(name: str, rv: int) -> Obj:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv)}}


def test_the_reflector_relists_on_410_and_replaces_the_store() -> None:
    stop = threading.Event()
    store = Store()
    lists = [([obj("a", 1), obj("b", 2)], "2"), ([obj("b", 5)], "5")]
    watched: list[str] = []

    def lister() -> tuple[list[Obj], str]:
        return lists.pop(0)

    def watcher(rv: str) -> Iterator[WatchEvent]:
        watched.append(rv)
        if rv == "2":
            yield "ADDED", obj("c", 3)
            raise ApiError(410, "too old resource version")
        stop.set()
        yield "MODIFIED", obj("b", 6)

    Reflector("test", lister, watcher, store, stop).run()
    assert watched == ["2", "5"]
    assert [o["metadata"]["name"] for o in store.items()] == ["b"]  # a and c were gone at the relist
    assert store.synced.is_set()


def test_the_store_drops_events_older_than_what_it_holds() -> None:
    store = Store()
    store.apply("MODIFIED", obj("a", 7))
    store.apply("MODIFIED", obj("a", 5))
    assert store.items()[0]["metadata"]["resourceVersion"] == "7"
    store.apply("DELETED", obj("a", 8))
    assert store.items() == []


def test_go_durations_as_the_simulator_reads_the_same_annotations() -> None:
    assert parse_duration("20s") == 20
    assert parse_duration("20") == 20  # a bare number is seconds, as in scenario files
    assert parse_duration("1m30s") == 90
    assert parse_duration("500ms") == pytest.approx(0.5)
    assert parse_duration("0") == 0
    for bad in ("", "-1s", "1x"):
        with pytest.raises(DurationError):
            parse_duration(bad)


def test_label_selectors_in_kubectls_syntax() -> None:
    def encode(selector: str) -> list[str]:
        return [op.encode(key) for key, op in _parse_selector(selector) or []]

    assert encode("kubetide.io/node-group") == ["kubetide.io/node-group"]
    assert encode("a=b,!c,d!=e,f in (x, y)") == ["a=b", "!c", "d!=e", "f in (x,y)"]
    assert _parse_selector("") is None
