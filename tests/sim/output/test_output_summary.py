"""summary.json carries every key of the contract; percentiles are nearest-rank; the stdout tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetide.cluster.loop.world import LoopStats
from kubetide.sim.output import (
    ClusterAutoscalerSummary,
    GroupSummary,
    Summary,
    WorkloadSummary,
    render_summary,
    time_to_schedule,
    write_summary_json,
)

REQUIRED = {
    "scenario": None,
    "seed": None,
    "simulated_seconds": None,
    "wall_seconds": None,
    "pods": {"pending_pod_seconds", "max_pending", "time_to_schedule_seconds", "unschedulable_at_end"},
    "nodes": {"node_seconds", "cost", "max", "final", "by_group"},
    "workloads": None,
    "autoscalers": {"cluster-autoscaler", "hpa", "escalator"},
}

# The contract's cluster-autoscaler block, in its order.
CA_CONTRACT_KEYS = [
    "scale_ups",
    "nodes_added",
    "scale_downs",
    "nodes_removed",
    "failed_scale_ups",
    "backoffs",
    "unregistered_removed",
]


def example() -> Summary:
    s = Summary(scenario="quickstart", seed=42, simulated_seconds=21600, wall_seconds=3.2)
    s.pods.pending_pod_seconds = 1234.0
    s.pods.max_pending = 37
    s.pods.time_to_schedule_seconds = time_to_schedule([0, 0, 0, 95, 160, 190])
    s.nodes.by_group = {"spot-a": GroupSummary(final=3, max=10, node_seconds=90000.0, cost=1.2)}
    s.nodes.node_seconds, s.nodes.cost, s.nodes.max, s.nodes.final = 432000.0, 12.34, 31, 12
    s.workloads = {
        "Deployment/default/web": WorkloadSummary(
            min_replicas=2, max_replicas=14, final_replicas=3, scale_events=9, overloaded_seconds=30.0
        )
    }
    s.cluster_autoscaler.scale_ups = 5
    s.cluster_autoscaler.nodes_added = 19
    s.hpa.rescales = 9
    return s


def test_summary_json_has_every_contract_key(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    write_summary_json(path, example())
    data = json.loads(path.read_text())
    for key, inner in REQUIRED.items():
        assert key in data
        if inner:
            assert inner <= set(data[key]), key
    assert set(data["pods"]["time_to_schedule_seconds"]) == {"p50", "p95", "p99", "max"}
    assert set(data["nodes"]["by_group"]["spot-a"]) == {"final", "max", "node_seconds", "cost"}
    assert set(data["workloads"]["Deployment/default/web"]) == {
        "min_replicas",
        "max_replicas",
        "final_replicas",
        "scale_events",
        "overloaded_seconds",
    }
    assert list(data["autoscalers"]["cluster-autoscaler"]) == CA_CONTRACT_KEYS
    assert set(data["autoscalers"]["hpa"]) == {"rescales"}
    assert set(data["autoscalers"]["escalator"]) == {
        "scale_ups",
        "nodes_added",
        "nodes_tainted",
        "nodes_removed",
    }
    assert data["scenario"] == "quickstart" and data["autoscalers"]["cluster-autoscaler"]["nodes_added"] == 19


def test_the_ca_block_is_the_loop_drivers_totals_in_the_contracts_order() -> None:
    """Every count the loop keeps is a key of the block (one type: they cannot drift); the contract's
    seven come first, kubetide's own and the loops after them, only when CA ran."""
    totals = LoopStats(**{name: i + 1 for i, name in enumerate(LoopStats.__dataclass_fields__)})
    s = example()
    s.cluster_autoscaler = ClusterAutoscalerSummary.of_run(totals, loops=8640)
    block = s.to_json()["autoscalers"]["cluster-autoscaler"]
    assert list(block) == [*CA_CONTRACT_KEYS, "failed_instances_removed", "loops"]
    assert block == {
        **{name: getattr(totals, name) for name in LoopStats.__dataclass_fields__},
        "loops": 8640,
    }
    assert s.cluster_autoscaler.enabled


def test_without_ca_the_block_is_the_contracts_counts_all_zero() -> None:
    s = Summary(scenario="hpa-only", seed=1, simulated_seconds=60)
    assert s.to_json()["autoscalers"]["cluster-autoscaler"] == dict.fromkeys(CA_CONTRACT_KEYS, 0)


def test_extra_keys_join_their_part_but_cannot_replace_a_contract_key() -> None:
    s = example()
    s.extra["expander"] = "least-waste"
    s.nodes.by_group["spot-a"].extra["instance_type"] = "c5d.large"
    data = s.to_json()
    assert data["expander"] == "least-waste"
    assert data["nodes"]["by_group"]["spot-a"]["instance_type"] == "c5d.large"
    s.pods.extra["max_pending"] = 1
    with pytest.raises(ValueError, match="max_pending"):
        s.to_json()


def test_a_group_named_extra_is_just_a_group() -> None:
    s = example()
    s.nodes.by_group["extra"] = GroupSummary(final=1)
    assert s.to_json()["nodes"]["by_group"]["extra"]["final"] == 1


def test_percentiles_are_durations_some_pod_waited() -> None:
    # 19 pods bound at once and one after 95 s: p95 is 0 s by nearest rank (19/20 = 95% waited 0 s).
    tts = time_to_schedule([0.0] * 19 + [95.0])
    assert (tts.p50, tts.p95, tts.p99, tts.max) == (0.0, 0.0, 95.0, 95.0)
    tts = time_to_schedule(range(1, 101))
    assert (tts.p50, tts.p95, tts.p99, tts.max) == (50.0, 95.0, 99.0, 100.0)


def test_percentiles_of_no_pods_are_zero() -> None:
    tts = time_to_schedule([])
    assert (tts.p50, tts.p95, tts.p99, tts.max) == (0.0, 0.0, 0.0, 0.0)


@given(st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=200))
def test_percentiles_are_ordered_observed_values(values: list[float]) -> None:
    tts = time_to_schedule(values)
    assert tts.p50 <= tts.p95 <= tts.p99 <= tts.max == max(values)
    assert {tts.p50, tts.p95, tts.p99} <= set(values)


def test_stdout_summary_tables() -> None:
    text = render_summary(example())
    assert text.startswith("kubetide simulate: quickstart (seed 42)")
    assert "simulated 6h in 3.20s wall (6,750x real time)" in text
    for heading in ("Pods", "Nodes", "Workloads", "Autoscalers"):
        assert f"\n{heading}\n" in text
    assert "time to schedule      p50 0s  p95 3m10s  p99 3m10s  max 3m10s" in text
    lines = text.splitlines()
    spot = next(line for line in lines if line.strip().startswith("spot-a"))
    assert spot.split() == ["spot-a", "3", "10", "25.0", "$1.20"]
    total = next(line for line in lines if line.strip().startswith("total"))
    assert total.split() == ["total", "12", "31", "120.0", "$12.34"]
    assert "Deployment/default/web" in text
    assert max(len(line) for line in lines) <= 110
