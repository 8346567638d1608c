"""``kubetide record``'s command line: the autoscalers' flags read as their own commands read them,
bad flags refused all at once (exit 2), a directory that is not a recording refused."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubetide.cli import main
from kubetide.commands.record import _kwok_creations
from kubetide.commands.record_autoscalers import found_in_cluster, read_autoscalers


def test_the_cluster_autoscalers_line_becomes_its_scenario_flags_and_the_recordings_provider() -> None:
    line = (
        "--cloud-provider=kwok --cloud-config=groups.yaml --nodes=0:5:general --nodes=1:3:spot "
        "--scan-interval=10s --expander=least-waste --leader-elect-resource-name=ca --address=:8085 --v=4"
    )
    found = read_autoscalers({"cluster-autoscaler": line}, {}, None)
    assert found.problems == []
    assert found.section["clusterAutoscaler"] == {
        "enabled": True,
        "flags": {"nodes": ["0:5:general", "1:3:spot"], "scan-interval": "10s", "expander": "least-waste"},
    }
    assert found.managed_by_ca == ("general", "spot")
    assert (
        found.provider_flags["cloud-provider"] == "kwok"
        and found.provider_flags["cloud-config"] == "groups.yaml"
    )
    assert any("--address" in note for note in found.notes)
    assert any("--cloud-config, --cloud-provider" in note for note in found.notes)


def test_a_line_given_with_a_mistake_is_refused_one_found_in_the_cluster_is_taken_as_far_as_it_goes() -> None:
    given = read_autoscalers({"cluster-autoscaler": "--scan-intervl=10s --expander=nope"}, {}, None)
    assert {flag for flag, _ in given.problems} == {"ca-flags --scan-intervl", "ca-flags --expander"}
    found = read_autoscalers(
        {},
        {"cluster-autoscaler": (["--scan-intervl=10s", "--scan-interval=20s"], "Deployment kube-system/ca")},
        None,
    )
    assert found.problems == [] and found.section["clusterAutoscaler"]["flags"] == {"scan-interval": "20s"}
    assert any("scan-intervl" in note for note in found.notes)


def test_the_hpa_line_gives_its_flags_and_how_it_read_the_metrics() -> None:
    found = read_autoscalers(
        {
            "hpa": "--prometheus-url=http://p:9090 --prometheus-rate-window=15s --horizontal-pod-autoscaler-tolerance=0.2"
        },
        {},
        None,
    )
    assert found.section["hpa"] == {"enabled": True, "flags": {"horizontal-pod-autoscaler-tolerance": 0.2}}
    assert found.metrics_flags == {"prometheus-url": "http://p:9090", "prometheus-rate-window": 15.0}
    assert any("no cluster autoscaler found" in note for note in found.notes)


def test_kubetides_and_upstreams_autoscalers_are_found_in_deployments() -> None:
    def deployment(name: str, **container: object) -> dict[str, object]:
        return {
            "metadata": {"name": name, "namespace": "kubetide"},
            "spec": {"template": {"spec": {"containers": [container]}}},
        }

    found = found_in_cluster(
        [
            deployment("hpa", image="kubetide:0.1.0", command=["kubetide", "run", "hpa"], args=["--v=2"]),
            deployment(
                "ca",
                image="registry.k8s.io/autoscaling/cluster-autoscaler:v1.31.0",
                command=["./cluster-autoscaler", "--nodes=1:5:g"],
                args=["--scan-interval=20s"],
            ),
            deployment("web", image="nginx"),
        ]
    )
    assert found["hpa"] == (["--v=2"], "Deployment kubetide/hpa")
    assert found["cluster-autoscaler"] == (
        ["--nodes=1:5:g", "--scan-interval=20s"],
        "Deployment kubetide/ca (upstream's Cluster Autoscaler)",
    )


def test_bad_flags_are_all_refused_with_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "record",
            "-o",
            str(tmp_path / "r"),
            "--duration",
            "soon",
            "--interval",
            "0s",
            "--prometheus-url",
            "ftp://x",
            "--escalator-nodegroups",
            str(tmp_path / "none.yaml"),
        ],
    )
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert any(line.startswith("kubetide record: --duration:") for line in lines)
    assert any(line.startswith("kubetide record: --interval: must be > 0") for line in lines)
    assert any(line.startswith("kubetide record: --prometheus-url:") for line in lines)
    assert any(line.startswith("kubetide record: --escalator-nodegroups: cannot read") for line in lines)
    assert "Traceback" not in result.output


def test_a_directory_with_other_files_is_not_recorded_into(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    result = CliRunner().invoke(main, ["record", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "holds files but no recording" in result.output


def test_a_recording_resumes_with_its_own_settings(tmp_path: Path) -> None:
    from kubetide.live.record.settings import RecordSettings, RecordState

    state = RecordState(RecordSettings(name="day", duration=600.0, load_model="per-pod"), 1.8e9)
    (tmp_path / "recording.json").write_text(state.to_text())
    result = CliRunner().invoke(
        main, ["record", "-o", str(tmp_path), "--load-model", "shared", "--ca-flags", "--scan-interval=1s"]
    )
    assert result.exit_code == 2
    assert "--load-model: the recording was made with 'per-pod'" in result.output
    assert "leave the autoscaler, provider and metrics flags out" in result.output
    (tmp_path / "recording.json").write_text(json.dumps({"format": 99}))
    result = CliRunner().invoke(main, ["record", "-o", str(tmp_path)])
    assert result.exit_code == 1 and "format 99" in result.output


def test_a_kwok_groups_delay_is_replayed_as_the_loop_that_creates_its_node() -> None:
    """The kwok provider creates a Node at the first CA loop after its due time, and the scale-up that
    set it was made after its own loop's start: 5 s with 10 s scans is the next loop, 10 s; 60 s is not
    the loop 60 s later (its start comes before the due time) but the one after, 70 s."""
    found = read_autoscalers({"cluster-autoscaler": "--scan-interval=10s --nodes=0:5:g"}, {}, None)
    provisioning = {g: {"delay": d} for g, d in (("a", "5s"), ("b", "60s"), ("c", "0s"), ("d", "12s"))}
    out = _kwok_creations(provisioning, found)
    assert {g: v["delay"] for g, v in out.items()} == {"a": "10s", "b": "70s", "c": "0s", "d": "20s"}
