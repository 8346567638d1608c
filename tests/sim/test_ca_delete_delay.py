"""--node-delete-delay-after-taint in the simulator: a node CA taints is drained and deleted that long
after, at that moment (upstream's deletion goroutine sleeps it), not in the loop that tainted it nor
at the next loop."""

from __future__ import annotations

from typing import Any

import pytest
from scenario_builders import deployment, doc, load

from kubetide.sim.simulation import Simulation


def _run(**flags: Any) -> tuple[float, float]:
    """A group of 3 nodes whose workload fits on 1: when CA taints the first node, and when it is gone."""
    web = deployment(replicas=1)
    group = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 5, "initialSize": 3}
    scenario = doc(
        duration="30m",
        nodeGroups=[group],
        objects=[web],
        traffic=[],
        autoscalers={
            "clusterAutoscaler": {
                "enabled": True,
                "flags": {"scan-interval": "10s", "scale-down-unneeded-time": "1m", **flags},
            }
        },
    )
    sim = Simulation(load(scenario))
    sim.run()
    ca = [e for e in sim.events.events if e.source == "cluster-autoscaler"]
    tainted = next(e for e in ca if e.message == "marked the node as toBeDeleted/unschedulable")
    removed = next(
        e
        for e in ca
        if e.message == "nodes removed by cluster autoscaler" and e.data["node"] == tainted.data["node"]
    )
    return tainted.t, removed.t


@pytest.mark.parametrize(("flag", "delay"), [(None, 5.0), ("0s", 0.0), ("3s", 3.0), ("25s", 25.0)])
def test_the_node_goes_exactly_the_delay_after_its_taint(flag: str | None, delay: float) -> None:
    tainted, removed = _run(**({} if flag is None else {"node-delete-delay-after-taint": flag}))
    assert removed - tainted == pytest.approx(delay)  # CA's default: 5s
