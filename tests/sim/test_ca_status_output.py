"""The simulator writes the cluster autoscaler's status ConfigMap as its last loop left it
(cluster-autoscaler-status.yaml beside the other outputs), as `kubectl get cm -o yaml` would show it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from scenario_builders import deployment, doc, load

from kubetide.sim.output.writer import CA_STATUS_FILE, write_outputs
from kubetide.sim.simulation import Simulation


def _run(tmp_path: Path, **autoscalers: Any) -> Path:
    scenario = doc(duration="20m", objects=[deployment(replicas=3)], traffic=[], autoscalers=autoscalers)
    result = Simulation(load(scenario)).run()
    write_outputs(tmp_path, result.summary, result.timeline, result.events, result.meta)
    return tmp_path / CA_STATUS_FILE


def test_the_last_loops_status_config_map_is_written(tmp_path: Path) -> None:
    path = _run(tmp_path, clusterAutoscaler={"enabled": True, "flags": {"scan-interval": "10s"}})
    config_map = yaml.safe_load(path.read_text())
    assert config_map["kind"] == "ConfigMap"
    assert config_map["metadata"]["name"] == "cluster-autoscaler-status"
    assert config_map["metadata"]["namespace"] == "kube-system"
    status = yaml.safe_load(config_map["data"]["status"])
    assert status["autoscalerStatus"] == "Running"
    assert status["clusterWide"]["health"]["status"] == "Healthy"
    assert [g["name"] for g in status["nodeGroups"]] == ["general", "spot"]
    # Written at the last loop, within one scan interval of the end (20m).
    stamp = config_map["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/last-updated"]
    assert stamp.startswith("1970-01-01 00:19:5")


def test_its_flags_name_it_and_can_turn_it_off(tmp_path: Path) -> None:
    flags = {"namespace": "autoscaling", "status-config-map-name": "ca-status"}
    path = _run(tmp_path / "a", clusterAutoscaler={"enabled": True, "flags": flags})
    assert yaml.safe_load(path.read_text())["metadata"] == {
        "name": "ca-status",
        "namespace": "autoscaling",
        "annotations": yaml.safe_load(path.read_text())["metadata"]["annotations"],
    }
    assert not _run(
        tmp_path / "b", clusterAutoscaler={"enabled": True, "flags": {"write-status-configmap": False}}
    ).exists()


def test_no_cluster_autoscaler_no_file(tmp_path: Path) -> None:
    assert not _run(tmp_path).exists()
