"""The scenario format's extensions for recorded days: actions from files, ``resizeGroup``, per-pod
usage series, re-applies that leave replicas to the HPA, and ``spec.recording``."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from scenario_builders import deployment, doc, load, problems

from kubetide.sim.simulation import Simulation


def _hpa(target: str = "web", utilization: int = 50, max_replicas: int = 10) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": target},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": max_replicas,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": utilization},
                    },
                }
            ],
        },
    }


def _lines(path: Path, actions: list[Any]) -> None:
    path.write_text("".join(json.dumps(a) + "\n" for a in actions))


# --- actions from files ------------------------------------------------------------------------------


def test_an_actions_entry_naming_a_jsonl_file_is_read_line_by_line(tmp_path: Path) -> None:
    _lines(
        tmp_path / "actions.jsonl",
        [
            {"at": 60, "scale": {"target": "Deployment/default/web", "replicas": 4}},
            {"at": 120, "scale": {"target": "Deployment/default/web", "replicas": 1}},
        ],
    )
    data = doc(
        actions=[{"at": 30, "scale": {"target": "Deployment/default/web", "replicas": 3}}, "actions.jsonl"]
    )
    scenario = load(data, base_dir=tmp_path)
    assert [(a.at, a.scale.replicas) for a in scenario.spec.actions if a.scale] == [
        (30, 3),
        (60, 4),
        (120, 1),
    ]


def test_problems_of_an_action_in_a_file_name_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "actions.jsonl").write_text(
        '{"at": 60, "scale": {"target": "Deployment/default/web", "replicas": 4}}\n'
        "\n"
        '{"at": 90, "scale": {"target": "Deployment/default/web", "replicas": -1}}\n'
        '{"at": 100, "delete": "Deployment/default/nope"}\n'
    )
    assert problems(doc(actions=["actions.jsonl"]), base_dir=tmp_path) == [
        "actions.jsonl:3.scale.replicas: must be >= 0, got -1",
    ]
    (tmp_path / "actions.jsonl").write_text('{"at": 100, "delete": "Deployment/default/nope"}\n')
    assert problems(doc(actions=["actions.jsonl"]), base_dir=tmp_path) == [
        "actions.jsonl:1.delete: no object Deployment/default/nope exists at that time",
    ]


def test_a_line_cut_short_is_an_error_naming_it_not_a_skipped_action(tmp_path: Path) -> None:
    (tmp_path / "actions.jsonl").write_text(
        '{"at": 60, "scale": {"target": "Deployment/default/web", "replicas": 4}}\n{"at": 90, "sca'
    )
    (found,) = problems(doc(actions=["actions.jsonl"]), base_dir=tmp_path)
    assert found.startswith("spec.actions[0]: actions.jsonl line 2: not JSON (the last line, cut short")


def test_a_missing_actions_file_is_named(tmp_path: Path) -> None:
    assert problems(doc(actions=["gone.jsonl"]), base_dir=tmp_path) == [
        "spec.actions[0]: cannot read actions from 'gone.jsonl': no such file (relative to the scenario)"
    ]


def test_a_yaml_actions_file_holds_documents_or_lists(tmp_path: Path) -> None:
    (tmp_path / "more.yaml").write_text(
        "- {at: 10m, scale: {target: Deployment/default/web, replicas: 5}}\n"
        "- {at: 20m, scale: {target: Deployment/default/web, replicas: x}}\n"
        "---\n"
        "{at: 30m, restart: cluster-autoscaler}\n"
    )
    found = problems(doc(actions=["more.yaml"]), base_dir=tmp_path)
    assert found == ["more.yaml[0][1].scale.replicas: must be an integer, got 'x'"]


# --- resizeGroup -----------------------------------------------------------------------------------


def test_resize_group_is_checked_against_the_group_and_its_bounds() -> None:
    data = doc(
        actions=[
            {"at": "1h", "resizeGroup": {"group": "spot", "size": 6}},
            {"at": "1h", "resizeGroup": {"group": "nope", "size": 1}},
        ]
    )
    assert problems(data) == [
        "spec.actions[0].resizeGroup.size: must be between the group's minSize and maxSize (0..5), got 6",
        "spec.actions[1].resizeGroup.group: no node group 'nope' (known: general, spot)",
    ]
    data = doc(actions=[{"at": "1h", "resizeGroup": {"group": "spot", "size": -1}}])
    assert problems(data) == ["spec.actions[0].resizeGroup.size: must be >= 0, got -1"]


def _resize_run(actions: list[dict[str, Any]]) -> Simulation:
    data = doc(duration="30m", traffic=[], autoscalers={}, actions=actions)
    data["spec"]["nodeGroups"][1]["provisioning"] = {
        "delay": "60s",
        "registerDelay": "10s",
        "readyDelay": "5s",
    }
    sim = Simulation(load(data))
    sim.run()
    return sim


def test_resize_group_launches_with_the_groups_delays_and_terminates_the_newest() -> None:
    sim = _resize_run(
        [
            {"at": "1m", "resizeGroup": {"group": "spot", "size": 3}},
            {"at": "10m", "resizeGroup": {"group": "spot", "size": 1}},
        ]
    )
    ready = [
        (e.t, e.data["node"]) for e in sim.events if e.reason == "NodeReady" and e.data["group"] == "spot"
    ]
    assert ready == [(135.0, "spot-1"), (135.0, "spot-2"), (135.0, "spot-3")]  # 60 + 10 + 5 s after 1m
    terminated = [e.data["instance"] for e in sim.events if e.reason == "InstanceTerminated"]
    assert len(terminated) == 2
    timeline = sim.timeline
    assert timeline is not None
    nodes = dict(zip(timeline.t.tolist(), timeline.column("nodes:spot").tolist(), strict=True))
    assert nodes[600.0] == 3 and nodes[900.0] == 1 and timeline.column("target:spot")[-1] == 1
    applied = [e for e in sim.events if e.reason == "ActionApplied" and e.data["action"] == "resizeGroup"]
    assert [(e.data["from"], e.data["to"], len(e.data["nodes"])) for e in applied] == [(0, 3, 0), (3, 1, 2)]
    assert applied[1].data["nodes"] == ["spot-3", "spot-2"]  # the newest first


# --- per-pod usage ---------------------------------------------------------------------------------


def test_per_pod_cpu_is_each_ready_pods_usage_whatever_the_number_of_pods(tmp_path: Path) -> None:
    (tmp_path / "web.csv").write_text("t,cpu\n0,0.05\n600,0.05\n601,0.2\n1800,0.2\n")
    data = doc(
        duration="30m",
        objects=[deployment(replicas=1), _hpa(utilization=50, max_replicas=3)],
        traffic=[
            {
                "target": "Deployment/default/web",
                "perPod": {"cpu": {"type": "csv", "path": "web.csv", "column": "cpu"}},
            }
        ],
        autoscalers={
            "hpa": {"syncPeriod": "15s", "cpuInitializationPeriod": "0s", "initialReadinessDelay": "0s"}
        },
    )
    data["spec"]["nodeGroups"][0]["minSize"] = 3
    sim = Simulation(load(data, base_dir=tmp_path))
    result = sim.run()
    utilization = result.timeline.column("cpu_utilization:Deployment/default/web")
    replicas = result.timeline.column("replicas:Deployment/default/web")
    t = result.timeline.t
    assert utilization[t == 300.0][0] == pytest.approx(20.0)  # 50m of 250m
    # 200m of 250m = 80% per pod, however many pods: the HPA goes to its maximum.
    assert utilization[t == 1500.0][0] == pytest.approx(80.0) and replicas[-1] == 3


def test_traffic_needs_rps_or_per_pod_usage() -> None:
    data = doc()
    del data["spec"]["traffic"][0]["rps"]
    assert problems(data) == ["spec.traffic[0].rps: is required (or perPod.cpu or perPod.memory)"]
    data["spec"]["traffic"][0]["perPod"] = {"memory": {"type": "constant", "value": 1e6}}
    load(data)


def test_a_per_pod_csv_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    data = doc()
    data["spec"]["traffic"][0]["perPod"] = {"cpu": {"type": "csv", "path": "no.csv", "column": "cpu"}}
    (found,) = problems(data, base_dir=tmp_path)
    assert found.startswith("spec.traffic[0].perPod.cpu.path: cannot read")


# --- re-applies and replicas -----------------------------------------------------------------------


def test_a_reapply_without_replicas_keeps_the_replicas_the_hpa_set() -> None:
    without = deployment(replicas=2)
    del without["spec"]["replicas"]
    without["spec"]["template"]["metadata"]["annotations"] = {"changed": "yes"}
    data = doc(
        duration="10m",
        traffic=[],
        autoscalers={},
        actions=[
            {"at": "1m", "scale": {"target": "Deployment/default/web", "replicas": 5}},
            {"at": "2m", "apply": without},
            {"at": "3m", "apply": deployment(replicas=4)},
        ],
    )
    result = Simulation(load(data)).run()
    replicas = dict(
        zip(
            result.timeline.t.tolist(),
            result.timeline.column("replicas:Deployment/default/web").tolist(),
            strict=True,
        )
    )
    assert (replicas[60.0], replicas[150.0], replicas[240.0]) == (5, 5, 4)


# --- spec.recording ----------------------------------------------------------------------------------


def test_the_recording_files_are_checked(tmp_path: Path) -> None:
    (tmp_path / "samples.jsonl").write_text(
        '{"t": 0, "nodes": {"general": 1}}\n{"t": 15, "nodes": {"general": "x"}}\n'
    )
    (tmp_path / "events.jsonl").write_text("")
    data = doc(recording={"samples": "samples.jsonl", "events": "events.jsonl"})
    assert problems(data, base_dir=tmp_path) == [
        "spec.recording.samples: samples.jsonl line 2: nodes['general'] must be a number"
    ]
    (tmp_path / "samples.jsonl").write_text('{"t": 0, "nodes": {"general": 1}}\n')
    assert load(data, base_dir=tmp_path).spec.recording is not None
    data["spec"]["recording"]["events"] = "none.jsonl"
    assert problems(data, base_dir=tmp_path) == [
        "spec.recording.events: cannot read 'none.jsonl': no such file"
    ]


def test_a_pod_has_samples_only_once_it_has_run_first_sample_after(tmp_path: Path) -> None:
    """Prometheus' rate() has a new pod's CPU only after two scrapes: until then the HPA sees it missing
    (counted as using nothing when it would scale up, upstream's ``groupPods``), so it scales up later."""
    (tmp_path / "web.csv").write_text("t,cpu\n0,0.2\n1800,0.2\n")

    def run(first_sample_after: str | None) -> tuple[Any, Simulation]:
        data = doc(
            duration="3m",
            objects=[deployment(replicas=1), _hpa(utilization=50, max_replicas=8)],
            traffic=[
                {
                    "target": "Deployment/default/web",
                    "perPod": {"cpu": {"type": "csv", "path": "web.csv", "column": "cpu"}},
                }
            ],
            autoscalers={
                "hpa": {"syncPeriod": "15s", "cpuInitializationPeriod": "0s", "initialReadinessDelay": "0s"}
            },
            metrics={
                "resolution": "1s",
                **({"firstSampleAfter": first_sample_after} if first_sample_after else {}),
            },
        )
        data["spec"]["nodeGroups"][0]["minSize"] = 3
        sim = Simulation(load(data, base_dir=tmp_path))
        return sim.run(), sim

    def rescales(sim: Simulation) -> list[tuple[float, str]]:
        return [(e.t, e.message.split(";")[0]) for e in sim.events.events if e.reason == "SuccessfulRescale"]

    _, at_once = run(None)
    _, later = run("20s")
    # 80% of the request per pod: 1 -> 2 -> 4 -> 7 -> 8, a step at every 15 s sync.
    steps = rescales(at_once)
    assert [m for _, m in steps] == ["New size: 2", "New size: 4", "New size: 7", "New size: 8"]
    assert [round(b[0] - a[0], 6) for a, b in itertools.pairwise(steps)] == [15.0, 15.0, 15.0]
    # The same steps, each waiting until the new pods have run 20 s: counted as using nothing until
    # then, they bring the average under the target (1 pod at 80% over 2 pods' requests: 40%).
    waited = rescales(later)
    assert [m for _, m in waited] == [m for _, m in steps]
    assert [round(b[0] - a[0], 6) for a, b in itertools.pairwise(waited)] == [30.0, 30.0, 30.0]
