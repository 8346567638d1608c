"""A recording replays as any scenario does: ``kubetide simulate DIR/scenario.yaml`` with the recorded
settings, ``--set`` and ``kubetide sweep`` with others, and the report draws the recorded day beside
the replay. The recording is made by the recorder on in-memory caches (a cluster autoscaler and an HPA
recorded running, the HPA's metrics read every step)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubetide.cli import main
from kubetide.hpa.ports import PodMetric
from kubetide.live.export.nodegroups import GroupBounds
from kubetide.live.record.files import Layout
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.selectors import LabelSelector

from .harness import START, Clock, Cluster, deployment, hpa, iso, node, pod, recorder, settings

CA_FLAGS = {"scan-interval": "10s", "scale-down-unneeded-time": "2m", "nodes": ["0:5:general"]}
BOUNDS = {"general": GroupBounds(0, 5)}  # what `kubetide record` gets from --nodes


class _Cpu:
    """Every pod of web uses ``cores[0]`` (the test changes it): what the metrics API answers."""

    def __init__(self, pods: Mapping[str, Any]) -> None:
        self.pods = pods
        self.cores = [0.4]

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        now = START
        value = round(self.cores[0] * 1000) if resource == "cpu" else 128 * 2**20
        return {name.split("/", 1)[1]: PodMetric(value, now, 30.0) for name in self.pods}

    def pod_metrics(self, *args: Any) -> Mapping[str, PodMetric]:
        return {}

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        return 0

    def external_metric(self, *args: Any) -> Sequence[int]:
        return []


def _record(directory: Path) -> None:
    cluster, clock = Cluster(), Clock()
    autoscalers = {
        "clusterAutoscaler": {"enabled": True, "flags": CA_FLAGS},
        "hpa": {"enabled": True, "flags": {"horizontal-pod-autoscaler-sync-period": "15s"}},
    }
    record_settings = settings(duration=900.0, autoscalers=autoscalers, managed=("general",))
    made = recorder(directory, cluster, clock, record_settings=record_settings)
    made._start_caches()
    cpu = _Cpu(cluster["pods"].store)
    made.sources.metrics = cpu
    made.sources.bounds = BOUNDS
    cluster["nodes"].put(node("general-1", "general", created=iso(-3600)))
    cluster["deployments"].put(deployment("web", 2))
    cluster["hpas"].put(hpa("web"))
    for i in range(2):
        cluster["pods"].put(pod(f"web-{i}", node_name="general-1", created=iso(-600)))
    informers = made.informers
    made._start_caches = lambda: None
    made.informers = informers
    made.open()
    for step in range(0, 901, 5):
        clock.t = float(step)
        if step == 300:  # the load doubles: the replay's HPA scales web up
            cpu.cores[0] = 0.8
        if made.step():
            break


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def test_a_recording_replays_with_its_settings_with_set_and_in_a_sweep(tmp_path: Path) -> None:
    directory = tmp_path / "day"
    _record(directory)
    scenario = directory / Layout.SCENARIO
    document = yaml.safe_load(scenario.read_text())
    # The recorded settings are the scenario's: the autoscalers' flags and the recorded day to compare.
    assert document["spec"]["autoscalers"]["clusterAutoscaler"]["flags"]["scale-down-unneeded-time"] == "2m"
    assert document["spec"]["recording"] == {"samples": Layout.SAMPLES, "events": Layout.EVENTS}

    code, output = cli("simulate", str(scenario), "--output-dir", str(tmp_path / "replay"))
    assert code == 0, output
    summary = json.loads((tmp_path / "replay" / "summary.json").read_text())
    assert summary["simulated_seconds"] == 900.0
    report = (tmp_path / "replay" / "report.html").read_text()
    assert "web replicas, recorded" in report and "general Ready, recorded" in report

    # Other settings: --set caps the replayed cluster autoscaler, so the replay stays on one node.
    code, output = cli(
        "simulate",
        str(scenario),
        "--output-dir",
        str(tmp_path / "replay-set"),
        "--set",
        "spec.autoscalers.clusterAutoscaler.flags.max-nodes-total=1",
    )
    assert code == 0, output
    assert _max_column(tmp_path / "replay", "nodes:general") > 1
    assert _max_column(tmp_path / "replay-set", "nodes:general") == 1

    # A sweep of the recording: each run as `simulate --set`, the recorded files found beside it.
    code, output = cli(
        "sweep",
        str(scenario),
        "--grid",
        "spec.autoscalers.clusterAutoscaler.flags.scale-down-unneeded-time=1m,5m",
        "--workers",
        "1",
        "--output-dir",
        str(tmp_path / "sweep"),
    )
    assert code == 0, output
    rows = json.loads((tmp_path / "sweep" / "sweep.json").read_text())
    assert len(rows) == 2 and all(row["error"] is None for row in rows)
    assert all(row["summary"]["simulated_seconds"] == 900.0 for row in rows)


def _max_column(directory: Path, column: str) -> float:
    lines = (directory / "timeline.csv").read_text().splitlines()
    header = lines[0].split(",")
    index = header.index(column)
    return max(float(line.split(",")[index]) for line in lines[1:] if line.split(",")[index])
