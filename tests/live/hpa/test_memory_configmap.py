"""The memory ConfigMap: one key per HPA, read back with each broken key named, written in one request
while nobody else writes it, created when missing, re-read on a conflict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubetide.hpa.memory import document
from kubetide.hpa.state import Recommendation, Remembered
from kubetide.live.hpa.memory_configmap import (
    WRITTEN_AT_ANNOTATION,
    MemoryConfigMap,
    MemoryStoreError,
    data_key,
    parse,
)
from kubetide.testing.apiserver import FakeApi, status

PATH = "/api/v1/namespaces/kubetide/configmaps"
NAME = f"{PATH}/kubetide-hpa-memory"


def configmap(rv: str, data: dict[str, str], **annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "kubetide-hpa-memory",
            "namespace": "kubetide",
            "resourceVersion": rv,
            "labels": {"team": "platform"},
            "annotations": annotations,
        },
        "data": data,
    }


def store(api: FakeApi) -> MemoryConfigMap:
    return MemoryConfigMap(api.rest(), "kubetide", "kubetide-hpa-memory", sleep=lambda _: None)


MEMORY = json.dumps(document(Remembered((Recommendation(3, 1_780_000_000.0),)), "uid-web"))


def test_data_keys_split_at_the_first_dot_as_a_namespace_has_none() -> None:
    assert data_key("shop/web.v2") == "shop.web.v2"
    stored = parse(configmap("1", {"shop.web.v2": MEMORY}), "cm")
    assert list(stored.memories) == ["shop/web.v2"]


def test_read_gives_every_memory_and_names_each_key_that_does_not_read() -> None:
    api = FakeApi().add(
        "GET",
        NAME,
        (
            200,
            configmap(
                "7",
                {
                    "shop.web": MEMORY,
                    "shop.api": "{not json",
                    "nodot": MEMORY,
                    "shop.batch": json.dumps({"recommendations": [{"replicas": "many"}]}),
                },
                **{WRITTEN_AT_ANNOTATION: "2026-05-28T20:26:40.500000Z"},
            ),
        ),
    )
    stored = store(api).read()
    assert stored is not None
    uid, state = stored.memories["shop/web"]
    assert uid == "uid-web" and state.recommendations == [Recommendation(3, 1_780_000_000.0)]
    assert set(stored.memories) == {"shop/web"}
    assert stored.written_at == 1_780_000_000.5
    where = "ConfigMap kubetide/kubetide-hpa-memory"
    assert stored.problems == [
        f"{where} data[shop.api]: not JSON (Expecting property name enclosed in double quotes)",
        f"{where} data[nodot]: not a <namespace>.<name> key",
        f"{where} data[shop.batch].recommendations[0].replicas: must be an integer, got 'many'",
    ]


def test_a_missing_configmap_is_no_memory_and_a_forbidden_one_an_error() -> None:
    assert store(FakeApi()).read() is None  # the double answers 404 to what it does not know
    api = FakeApi().add(
        "GET", NAME, status(403, "Forbidden", 'configmaps "kubetide-hpa-memory" is forbidden')
    )
    with pytest.raises(
        MemoryStoreError, match=r"cannot read ConfigMap kubetide/kubetide-hpa-memory: .*forbidden"
    ) as e:
        store(api).read()
    assert e.value.status == 403


def test_the_first_write_creates_it_then_each_write_is_one_put_with_the_last_version() -> None:
    api = FakeApi()
    api.add("GET", NAME, status(404, "NotFound"))
    api.add("POST", PATH, (201, configmap("10", {})))
    api.add("PUT", NAME, (200, configmap("11", {})), (200, configmap("12", {})))
    memory = store(api)
    memory.write({"shop.web": MEMORY}, "2026-05-28T20:26:40.000000Z")
    (created,) = api.bodies("POST", PATH)
    assert created["data"] == {"shop.web": MEMORY}
    assert created["metadata"]["annotations"] == {WRITTEN_AT_ANNOTATION: "2026-05-28T20:26:40.000000Z"}
    memory.write({}, "2026-05-28T20:26:55.000000Z")  # the HPA is gone: its key goes too
    memory.write({"shop.api": MEMORY}, "2026-05-28T20:27:10.000000Z")
    puts = api.bodies("PUT", NAME)
    assert [p["metadata"]["resourceVersion"] for p in puts] == ["10", "11"]
    assert [p["data"] for p in puts] == [{}, {"shop.api": MEMORY}]
    assert [r.method for r in api.requests] == ["GET", "POST", "PUT", "PUT"]


def test_a_conflict_reads_it_again_and_keeps_what_others_put_on_it() -> None:
    api = FakeApi()
    api.add("GET", NAME, (200, configmap("20", {"old.one": MEMORY}, note="kept")))
    api.add("PUT", NAME, status(409, "Conflict"), (200, configmap("21", {})))
    memory = store(api)
    memory._resource_version = "19"  # written by this process before someone else wrote it
    memory.write({"shop.web": MEMORY}, "2026-05-28T20:26:40.000000Z")
    first, second = api.bodies("PUT", NAME)
    assert first["metadata"]["resourceVersion"] == "19"
    assert second["metadata"]["resourceVersion"] == "20"
    assert second["metadata"]["labels"] == {"team": "platform"}
    assert second["metadata"]["annotations"]["note"] == "kept"
    assert second["data"] == {"shop.web": MEMORY}  # replaced whole


def test_a_write_that_keeps_failing_is_one_error_naming_the_configmap() -> None:
    api = FakeApi().add("GET", NAME, status(403, "Forbidden", "no update for you"))
    with pytest.raises(
        MemoryStoreError, match="cannot write ConfigMap kubetide/kubetide-hpa-memory: no update"
    ):
        store(api).write({}, "2026-05-28T20:26:40.000000Z")
    flaky = FakeApi().add("GET", NAME, status(503, "ServiceUnavailable"))
    with pytest.raises(MemoryStoreError):
        store(flaky).write({}, "2026-05-28T20:26:40.000000Z")
    assert len(flaky.requests) == 3  # retried with backoff, then given up until the next period
