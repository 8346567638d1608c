"""``kubetide replay compare``'s figures: a replay against the recording, criterion by criterion."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetide.sim.replay.fidelity import SimulatedDay, Tolerances, compare_day, read_simulated
from kubetide.sim.replay.recording import RecordedDay, RecordedEvent, read_recording


def _day(t: list[float], nodes: list[float], replicas: list[float], pending: float = 100.0) -> RecordedDay:
    series = {
        "nodes:general": np.array(nodes, dtype=float),
        "replicas:Deployment/default/web": np.array(replicas, dtype=float),
        "pending_pod_seconds": np.linspace(0, pending, len(t)),
    }
    return RecordedDay(np.array(t, dtype=float), series, ())


def _up(t: float, group: str = "general") -> RecordedEvent:
    return RecordedEvent(t, "cluster-autoscaler", "ScaledUpGroup", "NodeGroup/" + group,
                         f"Scale-up: setting group {group} size to 2 instead of 1 (max: 5)", {"group": group})  # fmt: skip


def _up_done(t: float) -> RecordedEvent:
    return RecordedEvent(t, "cluster-autoscaler", "ScaledUpGroup", "NodeGroup/general",
                         "Scale-up: group general size set to 2 instead of 1 (max: 5)", {"group": "general"})  # fmt: skip


def _down(t: float) -> RecordedEvent:
    return RecordedEvent(t, "cluster-autoscaler", "ScaleDownEmpty", "Node/general-1",
                         'Scale-down: removing empty node "general-1"', {"group": "general", "node": "general-1"})  # fmt: skip


def _simulated(
    t: list[float],
    nodes: list[float],
    replicas: list[float],
    events: tuple[RecordedEvent, ...] = (),
    pending: float = 100.0,
) -> SimulatedDay:
    series = {
        "nodes:general": np.array(nodes, dtype=float),
        "replicas:Deployment/default/web": np.array(replicas, dtype=float),
    }
    return SimulatedDay(np.array(t, dtype=float), series, events, pending, float(t[-1]))


def test_a_replay_within_every_tolerance_passes() -> None:
    t = [0, 30, 60, 90, 120, 150, 180]
    recorded = _day(t, [1, 1, 2, 3, 3, 2, 1], [1, 2, 4, 6, 6, 2, 1])
    recorded = RecordedDay(recorded.t, recorded.series, (_up(40), _up_done(40), _up(70), _down(160)))
    replay = _simulated(
        t, [1, 1, 2, 2, 3, 2, 1], [1, 2, 4, 5, 6, 2, 1], (_up(45), _up_done(45), _up(80), _down(170)), 110.0
    )
    fidelity = compare_day(recorded, replay)
    assert fidelity.minutes == 4
    assert [c.ok for c in fidelity.checks()] == [True] * 5
    assert fidelity.ok
    (counts,) = fidelity.scaling
    assert (counts.recorded_ups, counts.simulated_ups, counts.recorded_downs, counts.simulated_downs) == (
        2,
        2,
        1,
        1,
    )


def test_each_criterion_fails_on_its_own() -> None:
    t = [0, 60, 120]
    day = _day(t, [1, 3, 1], [1, 6, 1])
    recorded = RecordedDay(day.t, day.series, (_up(10), _down(100)))
    replay = _simulated(t, [1, 1, 1], [1, 3, 1], (_up(10), _up(20), _up(30, "other")), pending=150.0)
    nodes, groups, counts, replicas, pending = compare_day(recorded, replay).checks()
    assert not any(c.ok for c in (nodes, groups, counts, replicas, pending))
    assert nodes.detail == "general (1 min, up to 2)"
    assert (
        groups.detail
        == "up: recorded general, simulated general, other; down: recorded general, simulated none"
    )
    assert counts.detail == "general (1/2 up, 1/0 down); other (0/1 up, 0/0 down)"
    assert replicas.detail == "Deployment/default/web (1 min, up to 3)"
    assert pending.detail == "recorded 100.0, simulated 150.0 (50.0%)"


def test_the_pending_tolerance_is_relative_to_the_recording() -> None:
    t = [0, 60]
    recorded = _day(t, [1, 1], [1, 1], pending=100.0)
    assert compare_day(recorded, _simulated(t, [1, 1], [1, 1], pending=120.0)).checks()[-1].ok
    assert not compare_day(recorded, _simulated(t, [1, 1], [1, 1], pending=121.0)).checks()[-1].ok
    assert (
        compare_day(recorded, _simulated(t, [1, 1], [1, 1], pending=121.0), Tolerances(pending_ratio=0.25))
        .checks()[-1]
        .ok
    )


@given(st.lists(st.integers(0, 8), min_size=2, max_size=40))
def test_a_replay_equal_to_the_recording_passes_whatever_it_did(nodes: list[int]) -> None:
    t = [30.0 * i for i in range(len(nodes))]
    recorded = _day(t, nodes, nodes)
    replay = _simulated(t, nodes, nodes, pending=100.0)
    fidelity = compare_day(recorded, replay)
    assert fidelity.ok and all(f.max_difference == 0 for f in (*fidelity.nodes, *fidelity.replicas))
    assert fidelity.minutes == math.floor(t[-1] / 60) + 1


def test_the_files_are_read_as_written(tmp_path: Path) -> None:
    (tmp_path / "samples.jsonl").write_text(
        '{"t": 0, "nodes": {"general": 1}, "replicas": {"Deployment/default/web": 1}, "pending_pods": 0, "pending_pod_seconds": 0}\n'
        '{"t": 60, "nodes": {"general": 2, "new": 1}, "replicas": {"Deployment/default/web": 3}, "pending_pods": 1, "pending_pod_seconds": 12.5}\n'
    )
    (tmp_path / "events.jsonl").write_text(
        json.dumps(
            {
                "t": 30,
                "source": "cluster-autoscaler",
                "reason": "ScaledUpGroup",
                "object": "x",
                "message": "m",
                "data": {"group": "general"},
            }
        )
        + "\n"
    )
    day = read_recording(tmp_path, "samples.jsonl", "events.jsonl")
    assert day.t.tolist() == [0.0, 60.0]
    assert np.isnan(day.series["nodes:new"][0]) and day.series["nodes:new"][1] == 1
    assert day.pending_pod_seconds == 12.5 and day.names("nodes") == ["general", "new"]
    out = tmp_path / "out"
    out.mkdir()
    (out / "timeline.csv").write_text(
        "t,nodes:general,replicas:Deployment/default/web,pending_pods\n0,1,1,0\n60,2,3,\n"
    )
    (out / "events.jsonl").write_text("")
    (out / "summary.json").write_text(
        json.dumps({"simulated_seconds": 60, "pods": {"pending_pod_seconds": 12.0}})
    )
    simulated = read_simulated(out)
    assert simulated.duration == 60.0 and simulated.pending_pod_seconds == 12.0
    assert math.isnan(simulated.series["pending_pods"][1])
    fidelity = compare_day(day, simulated)
    assert (
        fidelity.nodes[1].name == "new" and fidelity.nodes[1].minutes_off == 2
    )  # the replay has no such group


@pytest.mark.parametrize(
    "bad", ['{"t": "x"}\n', '{"t": 5}\n{"t": 1}\n', '{"t": 0, "nodes": [1]}\n', '{"t": 0']
)
def test_a_broken_samples_file_is_named(tmp_path: Path, bad: str) -> None:
    from kubetide.sim.replay.recording import RecordingError

    (tmp_path / "s.jsonl").write_text(bad)
    (tmp_path / "e.jsonl").write_text("")
    with pytest.raises(RecordingError) as caught:
        read_recording(tmp_path, "s.jsonl", "e.jsonl")
    assert str(caught.value).startswith("s.jsonl line ") and caught.value.field == "samples"
