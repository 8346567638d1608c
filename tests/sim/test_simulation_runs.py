"""Whole simulations on small hand-written scenarios: what the summary and timeline say."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
from scenario_builders import deployment, doc, load

from kubetide.sim.simulation import Simulation


def run(data: dict[str, Any]) -> Any:
    return Simulation(load(data)).run()


def test_workloads_applied_by_actions_are_in_the_summary_and_timeline() -> None:
    result = run(doc(duration="3h", actions=[{"at": "1h", "apply": deployment("batch", replicas=3)}]))
    workloads = result.summary.to_json()["workloads"]
    batch = workloads["Deployment/default/batch"]
    assert (batch["min_replicas"], batch["max_replicas"], batch["final_replicas"]) == (0, 3, 3)
    replicas = result.timeline.column("replicas:Deployment/default/batch")
    assert replicas[0] == 0 and replicas[-1] == 3


def test_a_deleted_workload_ends_at_zero_with_no_stale_figures() -> None:
    result = run(doc(duration="3h", actions=[{"at": "1h", "delete": "Deployment/default/web"}]))
    web = result.summary.to_json()["workloads"]["Deployment/default/web"]
    assert (web["min_replicas"], web["max_replicas"], web["final_replicas"]) == (0, 2, 0)
    timeline = result.timeline
    assert timeline.column("ready:Deployment/default/web")[-1] == 0
    assert timeline.column("rps:Deployment/default/web")[-1] == 0


def test_reapplying_a_workload_with_other_replicas_is_a_scale_event() -> None:
    result = run(doc(duration="3h", actions=[{"at": "1h", "apply": deployment("web", replicas=5)}]))
    web = result.summary.to_json()["workloads"]["Deployment/default/web"]
    assert (web["max_replicas"], web["final_replicas"], web["scale_events"]) == (5, 5, 1)


def test_extreme_traffic_values_give_finite_metrics_and_negative_rates_serve_nothing() -> None:
    data = doc(duration="3h")
    traffic = data["spec"]["traffic"][0]
    traffic["rps"] = {"type": "step", "steps": [{"at": 0, "value": 1e308}, {"at": "2h", "value": -50}]}
    traffic["metrics"] = [{"name": "rps", "kind": "Pods"}, {"name": "queue", "kind": "External"}]
    data["spec"]["objects"].append(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 4,
                "metrics": [
                    {
                        "type": "Pods",
                        "pods": {
                            "metric": {"name": "rps"},
                            "target": {"type": "AverageValue", "averageValue": "10"},
                        },
                    },
                    {
                        "type": "External",
                        "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "10"}},
                    },
                ],
            },
        }
    )
    result = run(data)
    rps = result.timeline.column("rps:Deployment/default/web")
    assert rps[0] == 1e308 and rps[-1] == 0
    assert result.summary.to_json()["workloads"]["Deployment/default/web"]["max_replicas"] == 4


def test_an_hpa_applied_by_an_action_runs_although_none_existed_at_the_start() -> None:
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 6,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
        },
    }
    data = doc(duration="3h", actions=[{"at": "1h", "apply": hpa}, {"at": "2h", "restart": "hpa"}])
    data["spec"]["traffic"][0]["rps"] = {"type": "constant", "value": 400}
    assert load(data).enabled_autoscalers()[0] == "hpa"
    result = run(data)
    assert result.summary.hpa.rescales > 0
    assert all(e.t >= 3600 for e in result.events if e.source == "hpa")


def test_overloaded_seconds_never_exceed_the_run() -> None:
    data = doc(duration="1h", metrics={"resolution": "15s"})
    data["spec"]["traffic"][0]["rps"] = {"type": "constant", "value": 1000}
    data["spec"]["traffic"][0]["capacityPerPod"] = 1
    result = run(data)
    assert result.summary.to_json()["workloads"]["Deployment/default/web"]["overloaded_seconds"] == 3600


def test_nodes_that_turn_ready_after_the_last_row_count_in_the_maximum() -> None:
    data = doc(duration="70s", metrics={"resolution": "60s"})
    data["spec"]["nodeGroups"][1]["provisioning"] = {"delay": 0, "registerDelay": 0, "readyDelay": 0}
    data["spec"]["traffic"] = []
    simulation = Simulation(load(data))
    # As an autoscaler would: a node requested after the last row (t=60) is Ready before the end (70).
    simulation.engine.at(62.0, lambda t: simulation.cloud.node_group("spot").increase_size(1))
    nodes = simulation.run().summary.to_json()["nodes"]
    assert (nodes["by_group"]["spot"]["final"], nodes["by_group"]["spot"]["max"]) == (1, 1)
    assert nodes["final"] <= nodes["max"]


def test_the_pending_plot_peaks_at_the_summary_max() -> None:
    """A burst scheduled between two samples is on the plot: the timeline keeps the most pods pending
    within each step (in memory, for the report; timeline.csv keeps the contract's columns)."""
    data = doc(duration="3h")
    data["spec"]["metrics"] = {"resolution": "5m"}
    data["spec"]["actions"] = [  # a burst between the samples at 1h00 and 1h05
        {"at": "61m", "scale": {"target": "Deployment/default/web", "replicas": 40}},
        {"at": "63m", "scale": {"target": "Deployment/default/web", "replicas": 2}},
    ]
    result = Simulation(load(data)).run()
    peak = float(np.nanmax(result.timeline.column("pending_pods_max")))
    assert peak == result.summary.pods.max_pending > float(np.nanmax(result.timeline.column("pending_pods")))
    assert result.timeline.csv_columns == result.timeline.columns.index("pending_pods_max")


def test_a_run_collects_garbage_less_often_and_restores_the_collector_after() -> None:
    seen: list[tuple[int, int, int]] = []
    sim = Simulation(load(doc(duration="10m", traffic=[])))
    sim.engine.every(60.0, lambda now: seen.append(gc.get_threshold()), phase=1.0)
    before = gc.get_threshold()
    sim.run()
    assert seen and all(t[0] >= 50_000 for t in seen)
    assert gc.get_threshold() == before
