"""The event log: contract sources only, time order kept, counts, and events.jsonl lines per contract."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetide.sim.output import SOURCES, EventContractError, EventLog


def test_sources_are_the_contracts() -> None:
    assert set(SOURCES) == {
        "scenario",
        "cloud",
        "kubelet",
        "scheduler",
        "controller",
        "hpa",
        "cluster-autoscaler",
        "escalator",
    }


def test_unknown_source_is_refused() -> None:
    log = EventLog()
    with pytest.raises(EventContractError, match="unknown event source 'autoscaler'"):
        log.emit(1, "autoscaler", "ScaledUpGroup", "NodeGroup/a", "m")
    assert len(log) == 0


def test_jsonl_has_one_object_per_line_with_exactly_the_contract_fields(tmp_path: Path) -> None:
    log = EventLog()
    log.emit(
        612,
        "cluster-autoscaler",
        "TriggeredScaleUp",
        "Pod/default/web-7x2",
        "pod triggered scale-up: [{spot-a 0->3 (max: 20)}]",
        {"groups": ["spot-a"]},
    )
    log.emit(
        613,
        "kubelet",
        "NodeReady",
        "Node/a-1",
        "node is ready",
        {"group": "a", "node": "a-1", "instance": "i-1"},
    )
    log.emit(614, "scheduler", "FailedScheduling", "Pod/default/web-1", "0/3 nodes are available")
    path = tmp_path / "events.jsonl"
    log.write_jsonl(path)
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    first = json.loads(lines[0])
    assert first == {
        "t": 612.0,
        "source": "cluster-autoscaler",
        "reason": "TriggeredScaleUp",
        "object": "Pod/default/web-7x2",
        "message": "pod triggered scale-up: [{spot-a 0->3 (max: 20)}]",
        "data": {"groups": ["spot-a"]},
    }
    assert isinstance(first["t"], float)
    assert json.loads(lines[2])["data"] == {}  # no data is an empty object, never null


def test_late_events_are_sorted_stably_before_reading(tmp_path: Path) -> None:
    log = EventLog()
    log.emit(10, "hpa", "A", "o", "first at 10")
    log.emit(5, "hpa", "B", "o", "late, at 5")
    log.emit(10, "hpa", "C", "o", "second at 10")
    log.emit(7, "hpa", "D", "o", "late, at 7")
    assert [e.reason for e in log.events] == ["B", "D", "A", "C"]
    log.emit(8, "hpa", "E", "o", "late again")
    path = tmp_path / "events.jsonl"
    log.write_jsonl(path)
    assert [json.loads(line)["reason"] for line in path.read_text().splitlines()] == ["B", "D", "E", "A", "C"]


def test_counts_by_source_and_reason() -> None:
    log = EventLog()
    for i in range(5):
        log.emit(i, "scheduler", "Scheduled", f"Pod/default/p{i}", "assigned", {"node": "n"})
    log.emit(
        9,
        "hpa",
        "SuccessfulRescale",
        "HorizontalPodAutoscaler/default/web",
        "New size: 3",
        {"from": 2, "to": 3},
    )
    assert log.count("scheduler", "Scheduled") == 5
    assert log.count("hpa", "Nope") == 0
    assert log.counts() == {("scheduler", "Scheduled"): 5, ("hpa", "SuccessfulRescale"): 1}
    assert log.by_source() == {"scheduler": 5, "hpa": 1}


def test_strict_log_checks_the_contracts_data_keys() -> None:
    log = EventLog(strict=True)
    log.emit(1, "cluster-autoscaler", "ScaleDown", "Node/a-1", "removing", {"group": "a", "instance": "i-1"})
    log.emit(1, "cluster-autoscaler", "NotTriggerScaleUp", "Pod/x", "no group fits", {"reasons": {}})
    log.emit(1, "hpa", "SomethingNew", "x", "reasons outside the table are free")
    with pytest.raises(EventContractError, match="'to'"):
        log.emit(
            2, "hpa", "SuccessfulRescale", "HorizontalPodAutoscaler/default/web", "New size: 3", {"from": 2}
        )
    with pytest.raises(EventContractError, match="'node' or 'instance'"):
        log.emit(2, "cluster-autoscaler", "ScaleDownEmpty", "Node/a-1", "removing", {"group": "a"})
    EventLog().emit(2, "hpa", "SuccessfulRescale", "h", "m", {})  # lenient by default


def test_numpy_values_in_data_are_written_as_plain_json(tmp_path: Path) -> None:
    log = EventLog()
    log.emit(
        np.float64(3.5),
        "escalator",
        "EscalatorScaleUp",
        "NodeGroup/b",
        "up",
        {"group": "b", "delta": np.int64(2)},
    )
    path = tmp_path / "e.jsonl"
    log.write_jsonl(path)
    assert json.loads(path.read_text())["data"] == {"group": "b", "delta": 2}


def test_a_million_events_are_cheap(tmp_path: Path) -> None:
    log = EventLog()
    emit = log.emit
    for i in range(200_000):
        emit(i * 0.1, "scheduler", "Scheduled", "Pod/default/p", "Successfully assigned", {"node": "n-1"})
    assert len(log) == 200_000
    path = tmp_path / "big.jsonl"
    log.write_jsonl(path)
    with path.open() as f:
        assert sum(1 for _ in f) == 200_000


@given(st.lists(st.tuples(st.integers(0, 20), st.sampled_from(["A", "B"]), st.booleans()), max_size=60))
def test_counts_and_order_hold_whatever_the_emission_order(ops: list[tuple[int, str, bool]]) -> None:
    log = EventLog()
    emitted: list[tuple[int, str, int]] = []
    for seq, (t, reason, read) in enumerate(ops):
        log.emit(t, "hpa", reason, f"o{seq}", "m")
        emitted.append((t, reason, seq))
        if read:  # reading (counting, sorting) mid-run must not lose or double-count anything
            assert log.count("hpa", reason) == sum(1 for e in emitted if e[1] == reason)
            assert [r[0] for r in log.rows()] == sorted(e[0] for e in emitted)
    assert log.counts() == dict(Counter(("hpa", e[1]) for e in emitted))
    expected = [f"o{e[2]}" for e in sorted(emitted, key=lambda e: e[0])]  # stable: ties by emission
    assert [e.object for e in log] == expected


def test_times_that_are_not_json_are_written_as_null(tmp_path: Path) -> None:
    log = EventLog()
    log.emit(1, "scenario", "ActionApplied", "x", "m")
    log.emit(float("inf"), "scenario", "ActionApplied", "x", "never")
    path = tmp_path / "e.jsonl"
    log.write_jsonl(path)
    assert [json.loads(line)["t"] for line in path.read_text().splitlines()] == [1.0, None]


def test_text_is_escaped_in_jsonl(tmp_path: Path) -> None:
    log = EventLog()
    log.emit(1, "scenario", "ActionApplied", 'Pod/"q"', "line\nbreak, tab\t, café ✓")
    path = tmp_path / "e.jsonl"
    log.write_jsonl(path)
    (line,) = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["message"] == "line\nbreak, tab\t, café ✓"
    assert json.loads(line)["object"] == 'Pod/"q"'
