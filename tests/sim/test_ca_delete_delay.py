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


def test_a_restart_during_the_delay_deletes_each_node_once_and_counts_it_once() -> None:
    """Issue 26: CA restarted 5 s after tainting, with a 25 s delay: the dead process's wake-up does not
    run, the new process drains and deletes each node once (from the taint it finds), and the summary
    counts one removal per terminated instance."""
    web = deployment(replicas=1)
    group = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 5, "initialSize": 3}
    flags = {"scan-interval": "10s", "scale-down-unneeded-time": "1m", "node-delete-delay-after-taint": "25s"}
    plain = doc(
        duration="30m",
        nodeGroups=[group],
        objects=[web],
        traffic=[],
        autoscalers={"clusterAutoscaler": {"enabled": True, "flags": flags}},
    )
    sim = Simulation(load(plain))
    sim.run()
    (tainted_at,) = {
        e.t for e in sim.events.events if e.message == "marked the node as toBeDeleted/unschedulable"
    }
    restarted = Simulation(
        load(
            {
                **plain,
                "spec": {
                    **plain["spec"],
                    "actions": [{"at": f"{tainted_at + 5:g}s", "restart": "cluster-autoscaler"}],
                },
            }
        )
    )
    result = restarted.run()
    ca = [e for e in restarted.events.events if e.source == "cluster-autoscaler"]
    removed = [e.data["node"] for e in ca if e.message == "nodes removed by cluster autoscaler"]
    terminated = [
        e
        for e in restarted.events.events
        if e.reason == "InstanceTerminated" and "cluster-autoscaler" in e.message
    ]
    assert len(removed) == len(set(removed)) == len(terminated) == 2
    assert result.summary.to_json()["autoscalers"]["cluster-autoscaler"]["nodes_removed"] == 2
    # the new process's drain, due 25 s after the taint's whole second
    assert {e.t for e in ca if e.message == "nodes removed by cluster autoscaler"} == {
        float(int(tainted_at)) + 25
    }
