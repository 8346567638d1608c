"""The recorder's parts on their own: appended files and their repair, the Events it keeps, the
phases of the recorded loops, and the traffic the measured series become."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetide.hpa.ports import PodMetric
from kubetide.live.record.document import traffic_entries
from kubetide.live.record.events import EventTracker
from kubetide.live.record.files import AppendLog, repair
from kubetide.live.record.metrics import Feed, MetricSampler
from kubetide.live.record.phases import PhaseEstimate, parse_last_updated

from .harness import START, deployment, hpa, iso


def test_an_append_log_writes_its_header_once_and_whole_lines(tmp_path: Path) -> None:
    log = AppendLog(tmp_path / "m" / "x.csv", "t,cpu")
    log.append([])
    assert not log.path.exists()
    log.append(["0,0.1", "5,0.2"])
    log.append(["10,0.3"])
    assert log.path.read_text() == "t,cpu\n0,0.1\n5,0.2\n10,0.3\n"


@given(
    whole=st.lists(st.text(alphabet="abc{}:,", min_size=1, max_size=20), max_size=5),
    torn=st.text(alphabet="abc{", max_size=30),
)
def test_repair_cuts_exactly_the_unfinished_last_line(
    tmp_path_factory: pytest.TempPathFactory, whole: list[str], torn: str
) -> None:
    path = tmp_path_factory.mktemp("r") / "a.jsonl"
    kept = "".join(line + "\n" for line in whole)
    path.write_text(kept + torn)
    assert repair(path) == len(torn.encode())
    assert path.read_text() == kept
    assert repair(path) == 0


def test_repair_of_a_missing_or_empty_file_does_nothing(tmp_path: Path) -> None:
    assert repair(tmp_path / "none") == 0
    (tmp_path / "empty").write_text("")
    assert repair(tmp_path / "empty") == 0


def _event(
    uid: str,
    reason: str,
    message: str,
    count: int,
    at: float,
    kind: str = "ConfigMap",
    name: str = "cluster-autoscaler-status",
) -> dict[str, object]:
    return {
        "metadata": {"uid": uid},
        "involvedObject": {
            "kind": kind,
            "name": name,
            "namespace": "kube-system" if kind != "Node" else None,
        },
        "reason": reason,
        "message": message,
        "count": count,
        "lastTimestamp": iso(at),
        "source": {"component": "cluster-autoscaler"},
    }


def test_events_that_existed_before_are_not_recorded_and_each_repeat_is() -> None:
    tracker = EventTracker(START, {"n1": "general"}.get)
    old = _event(
        "u1", "ScaledUpGroup", "Scale-up: setting group general size to 2 instead of 1 (max: 5)", 1, -30.0
    )
    assert tracker.begin("cluster-autoscaler", [old]) == []
    assert tracker.observe("cluster-autoscaler", [old]) == []
    new = _event(
        "u2", "ScaledUpGroup", "Scale-up: setting group general size to 3 instead of 2 (max: 5)", 1, 12.0
    )
    down = _event(
        "u3", "ScaleDownEmpty", 'Scale-down: removing empty node "n1"', 2, 40.0, kind="Node", name="n1"
    )
    recorded = tracker.observe("cluster-autoscaler", [old, new, down])
    assert [(e["t"], e["reason"], e["object"], e["data"]) for e in recorded] == [
        (
            12.0,
            "ScaledUpGroup",
            "ConfigMap/kube-system/cluster-autoscaler-status",
            {"group": "general", "from": 2, "to": 3},
        ),
        (40.0, "ScaleDownEmpty", "Node/n1", {"node": "n1", "group": "general"}),
        (40.0, "ScaleDownEmpty", "Node/n1", {"node": "n1", "group": "general"}),
    ]
    down["count"] = 3
    assert len(tracker.observe("cluster-autoscaler", [old, new, down])) == 1
    # Another watch's Events do not make this one's look new.
    assert tracker.observe("horizontal-pod-autoscaler", []) == []
    assert tracker.observe("cluster-autoscaler", [old, new, down]) == []


def test_a_resumed_recording_records_once_the_events_after_its_end() -> None:
    tracker = EventTracker(START, lambda node: None)
    before = _event(
        "u1", "ScaledUpGroup", "Scale-up: setting group g size to 2 instead of 1 (max: 5)", 4, 100.0
    )
    after = _event(
        "u2", "ScaledUpGroup", "Scale-up: setting group g size to 3 instead of 2 (max: 5)", 4, 300.0
    )
    recorded = tracker.begin("cluster-autoscaler", [before, after], since=200.0)
    assert [e["t"] for e in recorded] == [300.0]


def test_the_status_configmaps_stamp_is_read_to_the_nanosecond() -> None:
    assert parse_last_updated("2027-01-15 08:00:07.25 +0000 UTC") == pytest.approx(START + 7.25)
    assert parse_last_updated("2027-01-15 09:00:07 +0100 CET") == pytest.approx(START + 7.0)
    assert parse_last_updated("yesterday") is None


@given(phase=st.floats(0, 9.999), jitter=st.lists(st.floats(-0.05, 0.05), min_size=1, max_size=30))
def test_the_phase_of_periodic_loops_is_found_even_around_the_periods_end(
    phase: float, jitter: list[float]
) -> None:
    estimate = PhaseEstimate(10.0)
    for k, noise in enumerate(jitter):
        estimate.observe(k * 10.0 + phase + noise + 100.0)
    found = estimate.phase()
    assert found is not None
    assert min(abs(found - phase), 10.0 - abs(found - phase)) <= 0.05 + 0.0005 + 1e-9  # noise, rounding


def test_the_load_model_chooses_what_the_measured_cpu_becomes() -> None:
    files = {
        "Deployment/default/web": {
            "cpu": "metrics/a.cpu.csv",
            "cpu_total": "metrics/a.cpu_total.csv",
            "memory": "metrics/a.memory.csv",
            "pods.rps": "metrics/a.pods.rps.csv",
        }
    }
    feeds = {"Deployment/default/web": {"pods.rps": Feed("pods.rps", "rps", "Pods", {"app": "web"})}}
    (per_pod,) = traffic_entries("per-pod", files, feeds)
    assert "rps" not in per_pod
    assert per_pod["perPod"]["cpu"] == {"type": "csv", "path": "metrics/a.cpu.csv", "column": "cpu"}
    assert per_pod["metrics"] == [
        {
            "name": "rps",
            "kind": "Pods",
            "selector": {"app": "web"},
            "series": {"type": "csv", "path": "metrics/a.pods.rps.csv", "column": "pods.rps"},
        }
    ]
    (shared,) = traffic_entries("shared", files, feeds)
    assert shared["rps"]["column"] == "cpu_total" and shared["cpuPerRequest"] == "1"
    assert "cpu" not in shared["perPod"] and shared["perPod"]["memory"]["column"] == "memory"


class _Sampled:
    """The metrics API: the pods ``pods[0]`` names have a CPU sample now."""

    def __init__(self) -> None:
        self.pods: list[list[str]] = [[]]

    def resource_metrics(self, namespace: str, selector: Any, resource: str, container: str) -> Any:
        return {name: PodMetric(300, START, 15.0) for name in self.pods[0]}


def test_how_long_a_new_pod_runs_before_its_first_sample_is_measured() -> None:
    source = _Sampled()
    starts = {"default/a": None, "default/b": 12.0, "default/c": 30.0}  # a: before the recording
    sampler = MetricSampler(source, lambda text: None, starts.get)  # type: ignore[arg-type]
    hpas = [{**hpa("web"), "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"}]
    workloads = {"Deployment/default/web": deployment("web", 3)}
    for t, pods in ((0.0, ["a"]), (15.0, ["a"]), (20.0, ["a", "b"]), (40.0, ["a", "b", "c"])):
        source.pods[0] = pods
        sampler.sample(hpas, workloads, t)
    assert list(sampler.first_sample_delays) == [8.0, 10.0]
    assert sampler.first_sample_after() == 9.0
