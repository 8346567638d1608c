"""The Cluster Autoscaler loop inside the simulation: wiring, the world it sees, restarts."""

from __future__ import annotations

from typing import Any

from scenario_builders import deployment, doc, load

from kubetide.sim.simulation import IMPLEMENTED_AUTOSCALERS, Simulation


def scenario(actions: list[dict[str, Any]] | None = None, **flags: Any) -> dict[str, Any]:
    web = deployment(replicas=6)
    web["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "900m"
    return doc(
        duration="1h",
        nodeGroups=[
            {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1},
        ],
        objects=[web],
        traffic=[],
        actions=actions or [],
        autoscalers={"clusterAutoscaler": {"enabled": True, "flags": {"scan-interval": "10s", **flags}}},
    )


def ca_events(sim: Simulation, reason: str) -> list[Any]:
    return [e for e in sim.events.events if e.source == "cluster-autoscaler" and e.reason == reason]


def test_cluster_autoscaler_is_implemented_and_scales_the_pending_pods() -> None:
    assert "cluster-autoscaler" in IMPLEMENTED_AUTOSCALERS
    sim = Simulation(load(scenario()))
    result = sim.run()
    ca = result.summary.to_json()["autoscalers"]["cluster-autoscaler"]
    # 6 pods of 900m on 2-CPU nodes: 2 per node, 3 nodes; one exists.
    assert ca["scale_ups"] == 1 and ca["nodes_added"] == 2
    assert result.summary.pods.unschedulable_at_end == 0
    assert ca_events(sim, "ScaledUpGroup")[0].data == {"group": "general", "from": 1, "to": 3}


def test_the_world_shows_deployment_pods_owned_by_a_replicaset_and_not_ready_taints() -> None:
    sim = Simulation(load(scenario()))
    sim._start()
    assert sim.ca is not None
    phase = sim.ca.options.scan_interval  # the first loop runs within one scan interval
    sim.engine.run(phase + 80.0)  # the new nodes registered (60s + 15s) but are not Ready yet (+10s)
    world = sim.ca.world()
    owners = {o.kind for p in world.pods for o in p.owners}
    assert owners == {"ReplicaSet"}
    assert any(not view.ready for view in world.nodes)
    for view in world.nodes:
        node = sim.cluster.nodes[view.name]
        has_taint = any(t.key == "node.kubernetes.io/not-ready" for t in view.taints)
        assert has_taint == (not node.ready) and view.ready == node.ready


def test_restart_does_not_repeat_a_scale_up_in_flight() -> None:
    # Restart 30s after the scale-up, long before the new nodes register.
    sim = Simulation(load(scenario(actions=[{"at": "40s", "restart": "cluster-autoscaler"}])))
    result = sim.run()
    ca = result.summary.to_json()["autoscalers"]["cluster-autoscaler"]
    assert ca["nodes_added"] == 2, [e.message for e in ca_events(sim, "ScaledUpGroup")]
    assert sim.cloud.target_sizes()["general"] == 3


def test_disabled_cluster_autoscaler_does_not_run() -> None:
    data = scenario()
    data["spec"]["autoscalers"]["clusterAutoscaler"]["enabled"] = False
    sim = Simulation(load(data))
    result = sim.run()
    assert sim.ca is None
    assert result.summary.to_json()["autoscalers"]["cluster-autoscaler"]["scale_ups"] == 0
    assert sim.cloud.target_sizes()["general"] == 1


def test_silent_stockout_times_out_backs_off_and_fails_over() -> None:
    data = scenario()
    data["spec"]["duration"] = "40m"
    data["spec"]["nodeGroups"].append(
        {
            "name": "spot",
            "instanceType": "m5.large",
            "minSize": 0,
            "maxSize": 5,
            "faults": [{"type": "stockout", "mode": "silent"}],
        }
    )
    data["spec"]["objects"].append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
            "data": {"priorities": "10:\n  - spot\n1:\n  - general\n"},
        }
    )
    data["spec"]["autoscalers"]["clusterAutoscaler"]["flags"]["expander"] = "priority"
    sim = Simulation(load(data))
    sim.run()
    first = ca_events(sim, "ScaledUpGroup")[0]
    assert first.data["group"] == "spot"
    (timed_out,) = ca_events(sim, "ScaleUpTimedOut")
    assert 900 < timed_out.t - first.t <= 920 and timed_out.data == {"group": "spot"}
    backoff = next(e for e in ca_events(sim, "NodeGroupBackoff") if e.t == timed_out.t)
    # CA 1.31: --initial-node-group-backoff-duration (exponential_backoff.go Backoff). kubetide's floor
    # (provision time plus two scan intervals) gave way to --failover-to-untried-groups.
    assert backoff.data["until"] == timed_out.t + 300
    # static_autoscaler.go: the timeout loop keeps the target (the node still counts as upcoming), the
    # next loop's fixNodeGroupSize lowers it and skips the loop, the one after scales the next group.
    (fixed,) = ca_events(sim, "FixNodeGroupSize")
    assert fixed.t - timed_out.t == 10
    failover = next(e for e in ca_events(sim, "ScaledUpGroup") if e.t >= timed_out.t)
    assert failover.data["group"] == "general" and failover.t - timed_out.t <= 20
    assert sim.cloud.target_sizes()["spot"] == 0  # fixed down to the nodes it has


def test_balance_similar_node_groups_balances_the_simulated_providers_groups() -> None:
    # Two identical groups differ only in the provider's own group label (kubetide.io/node-group),
    # which CA must ignore as it ignores eks.amazonaws.com/nodegroup on AWS: 6 nodes are split 3 + 3.
    web = deployment(replicas=12)
    web["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "900m"
    groups = [
        {"name": name, "instanceType": "m5.large", "minSize": 0, "maxSize": 10, "initialSize": 0}
        for name in ("pool-a", "pool-b")
    ]
    data = doc(
        duration="30m",
        nodeGroups=groups,
        objects=[web],
        traffic=[],
        autoscalers={
            "clusterAutoscaler": {
                "enabled": True,
                "flags": {"scan-interval": "10s", "balance-similar-node-groups": True},
            }
        },
    )
    sim = Simulation(load(data))
    sim.run()
    targets = {e.data["group"]: e.data["to"] for e in ca_events(sim, "ScaledUpGroup")}
    assert targets == {"pool-a": 3, "pool-b": 3}


def test_pods_of_a_bypassed_scheduler_trigger_a_scale_up_without_a_verdict() -> None:
    """Pods for another scheduler get no Unschedulable verdict from kube-scheduler, so CA ignores them
    unless --bypassed-scheduler-names names their scheduler, as upstream does."""

    def with_scheduler(**flags: Any) -> dict[str, Any]:
        data = scenario(**flags)
        data["spec"]["objects"][0]["spec"]["template"]["spec"]["schedulerName"] = "volcano"
        return data

    ignored = Simulation(load(with_scheduler())).run().summary.to_json()["autoscalers"]["cluster-autoscaler"]
    assert ignored["scale_ups"] == 0
    sim = Simulation(load(with_scheduler(**{"bypassed-scheduler-names": "volcano"})))
    bypassed = sim.run().summary.to_json()["autoscalers"]["cluster-autoscaler"]
    # 6 pods of 900m, 2 per node; the one node's room counts (CA's own simulation), so 2 more nodes.
    assert bypassed["scale_ups"] == 1 and bypassed["nodes_added"] == 2


def test_pods_are_as_old_as_their_creation_timestamp_says_to_the_second() -> None:
    """CA waits a loop while every unschedulable pod is under 2 s old (``allPodsAreNew``, upstream
    core/static_autoscaler.go, ``unschedulablePodTimeBuffer``), reading ``creationTimestamp``, which the
    API server keeps to the second: a pod made at 38.7 s is 2.5 s old to the loop at 40.5 s."""
    data = scenario(actions=[{"at": "38.7s", "scale": {"target": "Deployment/default/web", "replicas": 8}}])
    data["spec"]["objects"][0]["spec"]["replicas"] = 2  # both fit on the one node
    data["spec"]["autoscalers"]["clusterAutoscaler"]["firstLoopAt"] = "0.5s"
    data["spec"]["duration"] = "60s"
    sim = Simulation(load(data))
    sim.run()
    ups = ca_events(sim, "ScaledUpGroup")
    assert ups and ups[0].t == 40.5
