"""The batch autoscaler in ``simulate``: Escalator's algorithm on the virtual clock, seen from the outputs.

The example (``examples/escalator-batch.yaml``) is checked against Escalator's rules: scale-ups by
``ceil((util - threshold) / threshold x untainted)``, untainting before growing, tainting at the slow
and fast rates, deleting after the soft grace period once empty, the scale lock's cool-down, never
below the minimum, a restart mid drain, and the cluster autoscaler leaving the group alone. Small
scenarios built here cover the hard grace period, ``atlassian.com/no-delete``, ``taint_effect``, dry
mode, ``max_node_age`` and the health check; a property test runs random batch days.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetide.escalator.taints import NO_DELETE_ANNOTATION, TAINT_KEY
from kubetide.model.pod import Pod
from kubetide.sim.output.report import render_report
from kubetide.sim.output.summary_text import render_summary
from kubetide.sim.scenario import load_scenario, parse_scenario
from kubetide.sim.simulation import Simulation, SimulationResult

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "escalator-batch.yaml"
ACTIONS = ("EscalatorScaleUp", "EscalatorTaint", "EscalatorUntaint", "EscalatorDelete")


def _events(result: SimulationResult, source: str = "escalator") -> list[dict[str, Any]]:
    return [e.to_json() for e in result.events if e.source == source]


def _never_evict(sim: Simulation) -> list[Pod]:
    """Record any eviction the batch autoscaler asks for (it must ask for none)."""
    assert sim.escalator is not None
    asked: list[Pod] = []
    port = sim.escalator.port
    real = port.evict

    def evict(pod: Pod, grace_period_s: int | None = None) -> Any:
        asked.append(pod)
        return real(pod, grace_period_s)

    port.evict = evict  # type: ignore[method-assign]
    return asked


@pytest.fixture(scope="module")
def example() -> tuple[Simulation, SimulationResult, list[Pod]]:
    sim = Simulation(load_scenario(EXAMPLE))
    asked = _never_evict(sim)
    return sim, sim.run(), asked


def _at(series_t: tuple[float, ...], t: float) -> int:
    return series_t.index(t)


def test_example_scale_ups_follow_escalators_formula(example: Any) -> None:
    _, result, _ = example
    series = result.meta.escalator["batch"]
    ups = [e for e in _events(result) if e["reason"] == "EscalatorScaleUp"]
    assert len(ups) >= 3
    threshold = 70.0
    for e in ups:
        i = _at(series.t, e["t"])
        n = series.untainted[i]
        cpu, mem = series.cpu_percent[i], series.mem_percent[i]
        expected = max(
            math.ceil(n * ((cpu - threshold) / threshold)), math.ceil(n * ((mem - threshold) / threshold))
        )
        assert e["data"]["delta"] == expected, e
        assert e["data"]["untainted"] + e["data"]["increase"] <= expected
    # The first wave: 24 pods of 1.5 CPU on one 4-CPU node is 900%: ceil((900 - 70) / 70) = 12.
    assert ups[0]["data"] == {"group": "batch", "delta": 12, "untainted": 0, "increase": 12}


def test_example_untaints_before_growing_the_cloud_group(example: Any) -> None:
    _, result, _ = example
    series = result.meta.escalator["batch"]
    events = _events(result)
    ups = [e for e in events if e["reason"] == "EscalatorScaleUp"]
    for e in ups:
        tainted_before = series.tainted[_at(series.t, e["t"])]
        if e["data"]["increase"] > 0:  # the cloud grows only once every tainted node is back
            assert e["data"]["untainted"] == tainted_before, e
    retry = [e for e in ups if e["data"]["untainted"] > 0]
    assert retry and retry[0]["data"]["increase"] == 0  # the retry wave took its nodes back
    untaint = next(e for e in events if e["reason"] == "EscalatorUntaint" and e["t"] == retry[0]["t"])
    assert events.index(untaint) < events.index(retry[0])
    assert len(untaint["data"]["nodes"]) == retry[0]["data"]["untainted"]


def test_example_taints_at_the_configured_rates(example: Any) -> None:
    _, result, _ = example
    series = result.meta.escalator["batch"]
    taints = [e for e in _events(result) if e["reason"] == "EscalatorTaint"]
    assert taints
    for e in taints:
        i = _at(series.t, e["t"])
        used = max(series.cpu_percent[i], series.mem_percent[i])
        rate = 3 if used < 10 else 1  # fast_node_removal_rate below 10%, slow below 40%
        assert used < 40 and len(e["data"]["nodes"]) <= rate, e
    assert any(len(e["data"]["nodes"]) == 3 for e in taints)


def test_example_deletes_tainted_nodes_after_the_soft_grace_period_once_empty(example: Any) -> None:
    _, result, asked = example
    tainted_at: dict[str, float] = {}
    deleted = 0
    for e in _events(result):
        if e["reason"] == "EscalatorTaint":
            tainted_at.update(dict.fromkeys(e["data"]["nodes"], e["t"]))
        elif e["reason"] == "EscalatorUntaint":
            for node in e["data"]["nodes"]:
                del tainted_at[node]
        elif e["reason"] == "EscalatorDelete":
            for node in e["data"]["nodes"]:
                age = e["t"] - tainted_at.pop(node)
                assert 600 < age <= 600 + 60, (node, age)  # soft grace 10m, found by the next loop
                deleted += 1
    assert deleted == result.summary.escalator.nodes_removed > 0
    assert result.summary.escalator.extra["pods_on_removed_nodes"] == 0  # all were empty
    assert asked == []


def test_example_never_goes_below_the_minimum_and_ca_leaves_the_group_alone(example: Any) -> None:
    _, result, _ = example
    targets = result.timeline.column("target:batch")
    assert targets.min() >= 1 and targets.max() <= 30
    assert result.timeline.column("nodes:batch")[-1] >= 1
    for e in _events(result, "cluster-autoscaler"):
        assert e["data"].get("group") != "batch", e
    terminated = [e for e in _events(result, "cloud") if e["reason"] == "InstanceTerminated"]
    by_group = {
        (e["data"]["group"], e["message"].rsplit("requested by ", 1)[-1].rstrip(")")) for e in terminated
    }
    assert ("batch", "escalator") in by_group and ("batch", "cluster-autoscaler") not in by_group


def test_example_scale_lock_holds_every_action_for_the_cool_down(example: Any) -> None:
    _, result, _ = example
    events = _events(result)
    grown = [e["t"] for e in events if e["reason"] == "EscalatorScaleUp" and e["data"]["increase"] > 0]
    assert grown
    for t in grown:
        during = [e for e in events if t < e["t"] < t + 120 and e["reason"] in ACTIONS]
        assert during == []
        assert any(e["reason"] == "EscalatorScaleLockHeld" and t < e["t"] < t + 120 for e in events)


def test_example_a_restart_mid_drain_resumes_from_the_taints(example: Any) -> None:
    _, result, _ = example
    restart = next(e["t"] for e in _events(result, "scenario") if e["reason"] == "AutoscalerRestarted")
    events = _events(result)
    before = {
        n: e["t"]
        for e in events
        if e["reason"] == "EscalatorTaint" and e["t"] < restart
        for n in e["data"]["nodes"]
    }
    after = [e for e in events if e["reason"] == "EscalatorDelete" and e["t"] > restart]
    resumed = [(n, e["t"] - before[n]) for e in after for n in e["data"]["nodes"] if n in before]
    assert resumed and all(600 < age <= 660 for _, age in resumed)


def test_example_summary_and_report_show_the_batch_autoscaler(example: Any) -> None:
    _, result, _ = example
    esc = result.summary.to_json()["autoscalers"]["escalator"]
    assert esc["scale_ups"] >= 3 and esc["nodes_added"] >= 12
    assert esc["nodes_tainted"] >= esc["nodes_removed"] > 0 and esc["nodes_untainted"] > 0
    assert esc["metrics"]["escalator_run_count"] == esc["loops"] == 721  # t=0 then every 60s for 12h
    assert 'escalator_node_group_taint_event{node_group="batch"}' in esc["metrics"]
    text = render_summary(result.summary)
    assert "\n  escalator " in text
    html = render_report(result.summary, result.timeline, result.events, result.meta)
    assert "Batch autoscaler batch: utilization" in html and "Batch autoscaler batch: nodes" in html
    assert "scale up above 70%" in html and ">Escalator<" in html
    # The batch day's Jobs have their plot; pending pods are split by why they wait.
    assert 'id="chart-jobs"' in html and "unschedulable (no node fits)" in html
    succeeded = result.timeline.column("job_pods_succeeded")
    assert succeeded[-1] > 0 and all(succeeded[1:] >= succeeded[:-1])


def test_without_the_batch_autoscaler_there_is_no_escalator_row_or_card() -> None:
    data = _batch_doc(duration="30m")
    del data["spec"]["autoscalers"]["escalator"]
    result = Simulation(parse_scenario(data)).run()
    assert result.summary.to_json()["autoscalers"]["escalator"] == {
        "scale_ups": 0,
        "nodes_added": 0,
        "nodes_tainted": 0,
        "nodes_removed": 0,
    }  # the contract's required block stays in summary.json
    assert "escalator" not in render_summary(result.summary)
    html = render_report(result.summary, result.timeline, result.events, result.meta)
    assert ">Escalator<" not in html and "Batch autoscaler" not in html and ">escalator<" not in html


# --- small scenarios ---------------------------------------------------------------------------------

_GROUP: dict[str, Any] = {
    "name": "batch",
    "label_key": "workload",
    "label_value": "batch",
    "cloud_provider_group_name": "batch",
    "min_nodes": 1,
    "max_nodes": 10,
    "scale_up_threshold_percent": 70,
    "taint_upper_capacity_threshold_percent": 40,
    "taint_lower_capacity_threshold_percent": 10,
    "slow_node_removal_rate": 1,
    "fast_node_removal_rate": 2,
    "scale_up_cool_down_period": "2m",
    "soft_delete_grace_period": "5m",
    "hard_delete_grace_period": "30m",
}


def _job(name: str, pods: int, cpu: str, duration: str, host: str | None = None) -> dict[str, Any]:
    selector = {"workload": "batch", **({"kubernetes.io/hostname": host} if host else {})}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": pods,
            "completions": pods,
            "template": {
                "metadata": {"annotations": {"kubetide.io/duration": duration}},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": selector,
                    "containers": [{"name": "w", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
                },
            },
        },
    }


def _batch_doc(
    duration: str = "3h", initial: int = 3, objects: list[Any] | None = None, **group: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "kubetide.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "batch"},
        "spec": {
            "duration": duration,
            "seed": 3,
            "nodeGroups": [
                {
                    "name": "batch",
                    "instanceType": "c5.xlarge",
                    "labels": {"workload": "batch"},
                    "minSize": 1,
                    "maxSize": 10,
                    "initialSize": initial,
                    "provisioning": {"delay": "30s", "registerDelay": "10s", "readyDelay": "5s"},
                }
            ],
            "objects": objects or [],
            "autoscalers": {"escalator": {"scanInterval": "60s", "nodeGroups": [{**_GROUP, **group}]}},
        },
    }


def _pinned_long_jobs() -> list[Any]:
    # One long pod on each initial node: utilization 12.5% (slow removal), no node ever empties.
    # (The simulated cloud names a group's nodes <group>-1, <group>-2, ...)
    return [_job(f"long-{i}", 1, "500m", "10h", host=f"batch-{i}") for i in range(1, 4)]


def test_after_the_hard_grace_period_a_busy_node_is_deleted_with_its_pods_never_evicted() -> None:
    sim = Simulation(parse_scenario(_batch_doc(objects=_pinned_long_jobs())))
    asked = _never_evict(sim)
    result = sim.run()
    events = _events(result)
    tainted = {n: e["t"] for e in events if e["reason"] == "EscalatorTaint" for n in e["data"]["nodes"]}
    deletes = [(n, e["t"]) for e in events if e["reason"] == "EscalatorDelete" for n in e["data"]["nodes"]]
    assert len(tainted) == 2  # slow removal, one a loop, down to min_nodes
    assert sorted(n for n, _ in deletes) == sorted(tainted)
    for node, t in deletes:
        assert 1800 < t - tainted[node] <= 1860  # hard grace 30m: not empty, deleted regardless
    assert result.summary.escalator.extra["pods_on_removed_nodes"] == 2
    assert asked == []
    assert result.timeline.column("target:batch").min() >= 1


def test_no_delete_annotation_keeps_a_tainted_node_and_taint_effect_is_used() -> None:
    sim = Simulation(parse_scenario(_batch_doc(objects=_pinned_long_jobs(), taint_effect="NoExecute")))
    assert sim.escalator is not None
    port = sim.escalator.port

    def protect(now: float) -> None:
        for name in list(sim.cluster.nodes):
            port.annotate_node(name, {NO_DELETE_ANNOTATION: "true"})

    sim.engine.at(1.0, protect)
    result = sim.run()
    events = _events(result)
    assert any(e["reason"] == "EscalatorTaint" for e in events)
    assert not any(e["reason"] == "EscalatorDelete" for e in events)
    taints = [t for node in sim.cluster.nodes.values() for t in node.view.taints if t.key == TAINT_KEY]
    assert len(taints) == 2 and {t.effect for t in taints} == {"NoExecute"}


def test_dry_mode_decides_and_changes_nothing() -> None:
    data = _batch_doc(objects=[_job("wave", 16, "1500m", "20m")], dry_mode=True)
    result = Simulation(parse_scenario(data)).run()
    assert not [e for e in _events(result) if e["reason"] in ACTIONS]
    esc = result.summary.escalator
    assert (esc.scale_ups, esc.nodes_added, esc.nodes_tainted, esc.nodes_removed) == (0, 0, 0, 0)
    assert esc.extra["dry_run_actions"].get("increase", 0) > 0
    assert set(result.timeline.column("target:batch")) == {3.0}


def test_max_node_age_rotates_the_oldest_node_at_the_minimum() -> None:
    data = _batch_doc(initial=1, max_node_age="1h", duration="2h")
    result = Simulation(parse_scenario(data)).run()
    events = _events(result)
    up = next(e for e in events if e["reason"] == "EscalatorScaleUp")
    assert up["t"] > 3600 and up["data"]["delta"] == 1 and up["data"]["increase"] == 1
    later = [e for e in events if e["reason"] == "EscalatorTaint" and e["t"] > up["t"]]
    first = next(e["data"]["node"] for e in _events(result, "kubelet") if e["reason"] == "NodeRegistered")
    assert later and later[0]["data"]["nodes"] == [first]  # the old one goes, the new one stays


def test_an_unhealthy_node_is_tainted_by_the_health_check() -> None:
    data = _batch_doc(
        objects=[_job("work", 6, "1500m", "3h")],
        unhealthy_node_grace_period="1m",
        health_check_newest_nodes_percent=100,
        max_unhealthy_nodes_percent=50,
    )
    data["spec"]["nodeGroups"][0]["faults"] = [
        {"type": "nodeNotReady", "at": "30m", "until": "2h", "count": 1}
    ]
    result = Simulation(parse_scenario(data)).run()
    not_ready = next(e for e in _events(result, "kubelet") if e["reason"] == "NodeNotReady")
    node = not_ready["data"]["node"]
    taint = next(e for e in _events(result) if e["reason"] == "EscalatorTaint" and node in e["data"]["nodes"])
    assert not_ready["t"] <= taint["t"] <= not_ready["t"] + 60


# --- invariants ---------------------------------------------------------------------------------------

waves = st.lists(
    st.tuples(
        st.integers(0, 150),  # arrival, minutes
        st.integers(1, 20),  # pods
        st.sampled_from(["250m", "1", "1500m", "3"]),
        st.sampled_from(["5m", "20m", "90m"]),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    waves=waves,
    min_nodes=st.integers(1, 3),
    rates=st.tuples(st.integers(1, 2), st.integers(1, 3)).map(sorted),  # rates > 0 (documented_limits)
    hard=st.sampled_from(["6m", "30m"]),
)
def test_batch_days_never_go_below_the_minimum_never_evict_and_respect_the_rates(
    waves: list[tuple[int, int, str, str]], min_nodes: int, rates: list[int], hard: str
) -> None:
    slow, fast = rates
    actions = [
        {"at": f"{at}m", "apply": _job(f"wave-{i}", pods, cpu, duration)}
        for i, (at, pods, cpu, duration) in enumerate(waves)
    ]
    data = _batch_doc(
        duration="3h",
        initial=min_nodes,
        min_nodes=min_nodes,
        slow_node_removal_rate=slow,
        fast_node_removal_rate=fast,
        hard_delete_grace_period=hard,
    )
    data["spec"]["nodeGroups"][0]["minSize"] = min_nodes
    data["spec"]["actions"] = copy.deepcopy(actions)
    sim = Simulation(parse_scenario(data))
    asked = _never_evict(sim)
    result = sim.run()
    assert asked == []
    assert result.timeline.column("target:batch").min() >= min_nodes
    hard_s = {"6m": 360, "30m": 1800}[hard]
    tainted_at: dict[str, float] = {}
    ages: list[float] = []
    for e in _events(result):
        nodes = e["data"].get("nodes", [])
        if e["reason"] == "EscalatorTaint":
            assert len(nodes) <= fast
            tainted_at.update(dict.fromkeys(nodes, e["t"]))
        elif e["reason"] == "EscalatorUntaint":
            for node in nodes:
                tainted_at.pop(node)
        elif e["reason"] == "EscalatorDelete":
            ages += [e["t"] - tainted_at.pop(node) for node in nodes]
        elif e["reason"] == "EscalatorScaleUp":
            assert e["data"]["delta"] > 0
    assert all(age > 300 for age in ages)  # never before the soft grace period
    if result.summary.escalator.extra["pods_on_removed_nodes"]:  # busy nodes go only after the hard one
        assert any(age > hard_s for age in ages)


def test_a_refused_cloud_increase_takes_no_scale_lock_and_is_retried_next_loop() -> None:
    data = _batch_doc(initial=1, duration="1h")
    data["spec"]["nodeGroups"][0]["faults"] = [{"type": "apiError", "at": "0s", "until": "10m"}]
    data["spec"]["actions"] = [{"at": "2m", "apply": _job("wave", 8, "1500m", "30m")}]
    result = Simulation(parse_scenario(data)).run()
    events = _events(result)
    failed = [e for e in events if e["reason"] == "EscalatorScaleUpFailed"]
    assert failed and all(e["data"] == {"group": "batch"} and e["t"] < 600 for e in failed)
    # No lock after a refusal: the next loop asks again, every loop until the API answers.
    assert [e["t"] for e in failed] == [120.0 + 60 * i for i in range(len(failed))]
    grown = next(e for e in events if e["reason"] == "EscalatorScaleUp")
    assert 600 <= grown["t"] <= 660 and grown["data"]["increase"] > 0


def test_scale_on_starve_grows_by_one_for_a_pod_no_node_has_room_for() -> None:
    # Three 4-CPU nodes, each with 1 CPU taken, held at min_nodes: with the pending pod 54% is between
    # the thresholds (no scale by utilization), but no node has the 3.5 CPU it asks for.
    objects = [_job(f"small-{i}", 1, "1", "10h", host=f"batch-{i}") for i in range(1, 4)]
    data = _batch_doc(initial=3, duration="20m", objects=objects, scale_on_starve=True, min_nodes=3)
    data["spec"]["actions"] = [{"at": "5m", "apply": _job("big", 1, "3500m", "10h")}]
    result = Simulation(parse_scenario(data)).run()
    ups = [e for e in _events(result) if e["reason"] == "EscalatorScaleUp"]
    assert ups and ups[0]["t"] == 300 and ups[0]["data"]["delta"] == 1
    series = result.meta.escalator["batch"]
    assert 40 < series.cpu_percent[series.t.index(300.0)] < 70
