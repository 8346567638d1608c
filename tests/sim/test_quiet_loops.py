"""The simulator's skipped cluster autoscaler loops (``kubetide.sim.quiet_loops``): a run that skips the
loops that provably change nothing has the very same outputs as one that runs every loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sim_strategies import DATA_DIR, scenarios

from kubetide.bench.sim import scenario as day_scenario
from kubetide.sim.scenario import parse_scenario
from kubetide.sim.simulation import Simulation

Draw = Any


def _outputs(doc: dict[str, Any], tmp: Path, *, skip: bool) -> tuple[dict[str, bytes | str | None], int]:
    """Every output a run writes (the summary less its wall times), and the loops it skipped."""
    sim = Simulation(parse_scenario(doc, base_dir=DATA_DIR), skip_quiet_loops=skip)
    result = sim.run()
    out = tmp / ("skip" if skip else "all")
    out.mkdir(parents=True, exist_ok=True)
    result.events.write_jsonl(out / "events.jsonl")
    result.timeline.write_csv(out / "timeline.csv")
    summary = {k: v for k, v in result.summary.to_json().items() if "wall" not in k}
    skipped = sim.ca.skipper.skipped if sim.ca is not None else 0
    return {
        "events": (out / "events.jsonl").read_bytes(),
        "timeline": (out / "timeline.csv").read_bytes(),
        "summary": json.dumps(summary, sort_keys=True, default=str),
        "status": result.meta.ca_status_config_map,
    }, skipped


@st.composite
def with_cluster_autoscaler(draw: Draw) -> dict[str, Any]:
    """A random small scenario with the cluster autoscaler on, its time-based flags drawn short, so
    the deadlines (unneeded time, cooldowns, recheck times) fall inside the run; mostly without
    faults (a group with faults turns skipping off)."""
    doc = draw(scenarios(max_duration=2 * 3600))
    spec = doc["spec"]
    if draw(st.integers(0, 2)) > 0:
        for group in spec["nodeGroups"]:
            group.pop("faults", None)
    flags = {
        "scan-interval": draw(st.sampled_from(["10s", "15s", "30s"])),
        "scale-down-unneeded-time": draw(st.sampled_from(["0s", "30s", "2m", "10m"])),
        "scale-down-delay-after-add": draw(st.sampled_from(["0s", "1m", "10m"])),
        "scale-down-delay-after-delete": draw(st.sampled_from(["0s", "20s", "3m"])),
        "scale-down-delay-after-failure": draw(st.sampled_from(["0s", "3m"])),
        "unremovable-node-recheck-timeout": draw(st.sampled_from(["30s", "5m"])),
        "scale-down-utilization-threshold": draw(st.sampled_from([0.5, 0.8, 0.95])),
    }
    spec["autoscalers"]["clusterAutoscaler"] = {"enabled": True, "flags": flags}
    if draw(st.integers(0, 3)) == 0:
        spec["actions"].append(
            {"at": draw(st.integers(0, spec["duration"])), "restart": "cluster-autoscaler"}
        )
    return doc


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=with_cluster_autoscaler())
def test_skipping_quiet_loops_changes_no_output(doc: dict[str, Any], tmp_path_factory: Any) -> None:
    tmp = tmp_path_factory.mktemp("quiet")
    skipping, skipped = _outputs(doc, tmp, skip=True)
    every, _ = _outputs(doc, tmp, skip=False)
    event(f"loops skipped: {'some' if skipped else 'none'}")  # --hypothesis-show-statistics
    assert skipping == every


def test_a_steady_day_skips_most_loops_with_the_same_outputs(tmp_path: Path) -> None:
    """A small day of the bench's fixture: HPAs on daily curves, the cluster autoscaler shrinking the
    cluster, then mostly quiet."""
    doc = day_scenario(nodes=20, workloads=4, pods_per_workload=60, hours=3, cluster_autoscaler=True)
    skipping, skipped = _outputs(doc, tmp_path, skip=True)
    every, none_skipped = _outputs(doc, tmp_path, skip=False)
    assert none_skipped == 0
    assert skipped > 3 * 360 // 2  # most of the 1,080 loops
    assert skipping == every
