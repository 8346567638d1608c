"""Regression scenarios for issue 8: Cluster Autoscaler's failure modes, run through the real CA loop in
the simulator (each failed before its fix)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from scenario_builders import deployment, doc, load

from kubetide.sim.simulation import Simulation


def web(replicas: int, cpu: str = "900m") -> dict[str, Any]:
    d = deployment(replicas=replicas)
    d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    return d


def scenario(
    groups: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    duration: str = "1h",
    actions: list[dict[str, Any]] | None = None,
    **flags: Any,
) -> dict[str, Any]:
    return doc(
        duration=duration,
        nodeGroups=groups,
        objects=objects,
        traffic=[],
        actions=actions or [],
        autoscalers={"clusterAutoscaler": {"enabled": True, "flags": {"scan-interval": "10s", **flags}}},
    )


def ca_events(sim: Simulation, reason: str) -> list[Any]:
    return [e for e in sim.events.events if e.source == "cluster-autoscaler" and e.reason == reason]


def scale_ups(sim: Simulation) -> list[Any]:
    """One ``ScaledUpGroup`` per scale-up (CA records "setting group ..." and then "group ... set to")."""
    return [e for e in ca_events(sim, "ScaledUpGroup") if " size set to " in e.message]


def events(sim: Simulation, source: str, reason: str) -> list[Any]:
    return [e for e in sim.events.events if e.source == source and e.reason == reason]


# -- 1. a Node registered without spec.providerID ------------------------------------------------------


def test_a_node_without_provider_id_is_matched_by_address_and_never_terminated() -> None:
    group = {
        "name": "general",
        "instanceType": "m5.large",
        "minSize": 1,
        "maxSize": 10,
        "initialSize": 1,
        "faults": [{"type": "missingProviderID", "count": 1}],
    }
    sim = Simulation(load(scenario([group], [web(4)], duration="40m")))
    result = sim.run()
    assert ca_events(sim, "DeleteUnregistered") == []
    assert [e for e in events(sim, "cloud", "InstanceTerminated")] == []
    (warning, *_) = ca_events(sim, "NodeWithoutProviderID")
    assert warning.data["group"] == "general" and warning.data["instance"]
    assert result.summary.pods.unschedulable_at_end == 0
    assert sim.cloud.target_sizes()["general"] == 2


# -- 2. required hostname anti-affinity and upcoming nodes ---------------------------------------------


def test_one_pod_per_node_anti_affinity_adds_one_node_per_pod_not_the_group_max() -> None:
    spread = web(6, cpu="100m")
    spread["spec"]["template"]["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    group = {"name": "general", "instanceType": "m5.large", "minSize": 0, "maxSize": 30, "initialSize": 0}
    sim = Simulation(load(scenario([group], [spread], duration="20m")))
    result = sim.run()
    ca = result.summary.to_json()["autoscalers"]["cluster-autoscaler"]
    assert ca["nodes_added"] == 6, [e.data for e in ca_events(sim, "ScaledUpGroup")]
    assert result.summary.pods.unschedulable_at_end == 0


# -- 3 and 10. silent stockouts: failover order and the provision clock --------------------------------


def priorities(text: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
        "data": {"priorities": text},
    }


def stocked_out(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "instanceType": "m5.large",
        "minSize": 0,
        "maxSize": 10,
        "faults": [{"type": "stockout", "mode": "silent"}],
    }


def test_two_silent_stockouts_do_not_alternate_before_the_healthy_group() -> None:
    general = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1}
    groups = [stocked_out("spot-a"), stocked_out("spot-b"), general]
    objects = [web(6), priorities("30:\n  - spot-a\n20:\n  - spot-b\n1:\n  - general\n")]
    sim = Simulation(load(scenario(groups, objects, duration="2h", expander="priority")))
    result = sim.run()
    order = [e.data["group"] for e in scale_ups(sim)]
    assert order[:3] == ["spot-a", "spot-b", "general"], order
    healthy = next(e for e in scale_ups(sim) if e.data["group"] == "general")
    # Two provision timeouts, then the healthy group within a few loops. Per stuck group, CA 1.31 spends
    # the loop that times it out (its missing node still counts as upcoming: GetUpcomingNodes) and the
    # loop that fixes its size (fixNodeGroupSize, which skips the rest of the loop) before the next one.
    assert healthy.t <= 2 * 900 + 9 * 10
    assert result.summary.pods.unschedulable_at_end == 0


def test_three_silent_stockouts_fail_over_to_the_healthy_group_trying_each_once() -> None:
    """Issue 26: three silently stocked-out groups preferred (priority expander) over a healthy one.
    CA 1.31 backs a timed-out group off for 5m (utils/backoff/exponential_backoff.go), which ends before
    the next stuck group has timed out, so it chose the first again and pods waited about an hour.
    kubetide (--failover-to-untried-groups) does not choose a group that timed out while a group not
    tried yet can take the pods: the healthy group is reached after three provision timeouts plus a
    few loops, and each stuck group is tried once."""
    general = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1}
    groups = [stocked_out("spot-a"), stocked_out("spot-b"), stocked_out("spot-c"), general]
    objects = [web(6), priorities("40:\n  - spot-a\n30:\n  - spot-b\n20:\n  - spot-c\n1:\n  - general\n")]
    sim = Simulation(load(scenario(groups, objects, duration="2h", expander="priority")))
    result = sim.run()
    ups = scale_ups(sim)
    order = [e.data["group"] for e in ups]
    assert order[:4] == ["spot-a", "spot-b", "spot-c", "general"], order
    healthy = next(e for e in ups if e.data["group"] == "general")
    assert healthy.t <= 3 * 900 + 14 * 10
    before = [e.data["group"] for e in ups if e.t < healthy.t]
    assert sorted(before) == ["spot-a", "spot-b", "spot-c"]  # no stuck group chosen twice
    assert result.summary.pods.unschedulable_at_end == 0


def test_ca_failover_alternates_between_stuck_groups_without_the_flag() -> None:
    """--failover-to-untried-groups=false is CA 1.31's way: a timed-out group whose 5m backoff has
    ended is chosen again by the priority expander before the groups not tried yet."""
    general = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1}
    groups = [stocked_out("spot-a"), stocked_out("spot-b"), stocked_out("spot-c"), general]
    objects = [web(6), priorities("40:\n  - spot-a\n30:\n  - spot-b\n20:\n  - spot-c\n1:\n  - general\n")]
    data = scenario(
        groups, objects, duration="1h", expander="priority", **{"failover-to-untried-groups": False}
    )
    sim = Simulation(load(data))
    sim.run()
    order = [e.data["group"] for e in scale_ups(sim)]
    assert order[:3] == ["spot-a", "spot-b", "spot-a"], order


def test_a_second_scale_up_of_a_stuck_group_keeps_its_provision_clock() -> None:
    general = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1}
    more = {"at": "8m", "scale": {"target": "Deployment/default/web", "replicas": 10}}
    groups = [stocked_out("spot"), general]
    objects = [web(4), priorities("10:\n  - spot\n1:\n  - general\n")]
    sim = Simulation(load(scenario(groups, objects, duration="1h", actions=[more], expander="priority")))
    sim.run()
    ups = [e for e in scale_ups(sim) if e.data["group"] == "spot"]
    assert len(ups) >= 2 and ups[1].t >= 480, [(e.t, e.data) for e in ups]  # the stuck group grew again
    (timed_out, *_) = ca_events(sim, "ScaleUpTimedOut")
    assert timed_out.t - ups[0].t <= 900 + 20  # from the first request, not the second


# -- 5. templates of groups at zero include the DaemonSet pods that would run there ----------------------


def test_a_group_at_zero_whose_daemonsets_fill_its_nodes_is_not_chosen() -> None:
    agent = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "containers": [
                        {"name": "a", "image": "agent", "resources": {"requests": {"cpu": "1500m"}}}
                    ]
                },
            },
        },
    }
    small = {"name": "small", "instanceType": "m5.large", "minSize": 0, "maxSize": 10, "initialSize": 0}
    large = {"name": "large", "instanceType": "m5.2xlarge", "minSize": 1, "maxSize": 10, "initialSize": 1}
    objects = [web(10), agent, priorities("10:\n  - small\n1:\n  - large\n")]
    sim = Simulation(load(scenario([small, large], objects, duration="30m", expander="priority")))
    result = sim.run()
    groups = {e.data["group"] for e in scale_ups(sim)}
    assert groups == {"large"}, [(e.t, e.data) for e in scale_ups(sim)]
    assert result.summary.pods.unschedulable_at_end == 0


# -- 8. a failing DeleteNodes is not retried with a fresh drain at once ----------------------------------


def test_failing_delete_nodes_waits_the_delay_after_failure_and_backs_the_node_off() -> None:
    group = {
        "name": "general",
        "instanceType": "m5.large",
        "minSize": 1,
        "maxSize": 10,
        "initialSize": 3,
        "faults": [{"type": "apiError", "at": 0, "until": "1h"}],
    }
    spread = web(3, cpu="300m")
    sim = Simulation(load(scenario([group], [spread], duration="1h")))
    sim.run()
    starts = [
        e for e in ca_events(sim, "ScaleDown") if e.message == "marked the node as toBeDeleted/unschedulable"
    ]
    failures = ca_events(sim, "ScaleDownFailed")
    assert failures, "the scenario must make DeleteNodes fail"
    times = [e.t for e in starts]
    assert all(b - a >= 180 for a, b in pairwise(times)), times  # --scale-down-delay-after-failure
    by_node: dict[str, list[float]] = {}
    for e in starts:
        by_node.setdefault(e.data["node"], []).append(e.t)
    for node_times in by_node.values():  # a node whose deletion failed is left alone for 5m
        assert all(b - a >= 300 for a, b in pairwise(node_times)), by_node


# -- 4 and 9. restarts keep the provision clock and the backoff ------------------------------------------


def restarts(every_s: int, until_s: int) -> list[dict[str, Any]]:
    return [{"at": f"{t}s", "restart": "cluster-autoscaler"} for t in range(every_s, until_s, every_s)]


def test_an_autoscaler_restarted_every_few_minutes_still_fails_over_from_a_silent_stockout() -> None:
    general = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1}
    groups = [stocked_out("spot"), general]
    objects = [web(4), priorities("10:\n  - spot\n1:\n  - general\n")]
    data = scenario(groups, objects, duration="1h", actions=restarts(240, 3600), expander="priority")
    sim = Simulation(load(data))
    result = sim.run()
    first = scale_ups(sim)[0]
    assert first.data["group"] == "spot"
    (timed_out, *_) = ca_events(sim, "ScaleUpTimedOut")
    assert timed_out.t - first.t <= 900 + 20
    failover = next(e for e in scale_ups(sim) if e.data["group"] == "general")
    # The timeout loop, the loop that fixes the size (its first observation is in the state ConfigMap
    # too, or each restart would start it afresh), then the next group.
    assert failover.t - timed_out.t <= 20
    assert result.summary.pods.unschedulable_at_end == 0


def test_an_autoscaler_restarted_every_few_minutes_still_removes_unregistered_instances() -> None:
    group = {
        "name": "general",
        "instanceType": "m5.large",
        "minSize": 1,
        "maxSize": 10,
        "initialSize": 1,
        "faults": [{"type": "unregistered", "count": 1}],
    }
    data = scenario([group], [web(4)], duration="1h", actions=restarts(240, 3600))
    sim = Simulation(load(data))
    sim.run()
    created = events(sim, "cloud", "InstanceCreated")
    (removed, *_) = ca_events(sim, "DeleteUnregistered")
    lost = next(e for e in created if e.data["instance"] == removed.data["instance"])
    assert removed.t - lost.t <= 900 + 90  # provision time after it was requested (plus boot delays)


def test_a_restart_between_a_scale_up_and_its_timeout_does_not_skip_the_backoff() -> None:
    general = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1}
    groups = [stocked_out("spot"), general]
    objects = [web(4), priorities("10:\n  - spot\n1:\n  - general\n")]
    # Restarted 14m after the scale-up, and again right after the timeout is found.
    actions = [
        {"at": "850s", "restart": "cluster-autoscaler"},
        {"at": "925s", "restart": "cluster-autoscaler"},
    ]
    data = scenario(groups, objects, duration="1h", actions=actions, expander="priority")
    sim = Simulation(load(data))
    sim.run()
    first = scale_ups(sim)[0]
    (timed_out,) = ca_events(sim, "ScaleUpTimedOut")
    assert timed_out.t - first.t <= 900 + 20
    assert [e.data["group"] for e in scale_ups(sim)][:2] == ["spot", "general"]
    # the backoff survives the restart at 925s: spot is not tried again within it
    again = [e for e in scale_ups(sim) if e.data["group"] == "spot" and e.t > timed_out.t]
    assert all(e.t > timed_out.t + 900 for e in again)


def test_a_restart_with_failed_instances_in_the_cloud_backs_the_group_off() -> None:
    general = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1}
    spot = {**stocked_out("spot"), "faults": [{"type": "stockout", "mode": "error"}]}
    objects = [web(4), priorities("10:\n  - spot\n1:\n  - general\n")]
    actions = [{"at": "12s", "restart": "cluster-autoscaler"}]  # after the scale-up, before the next loop
    data = scenario([spot, general], objects, duration="30m", actions=actions, expander="priority")
    sim = Simulation(load(data))
    sim.run()
    assert [e.data["group"] for e in scale_ups(sim)][:2] == ["spot", "general"]
    assert any(e.data["group"] == "spot" for e in ca_events(sim, "NodeGroupBackoff"))


# -- --scale-up-progress-timeout (kubetide's own flag) ------------------------------------------------------


def test_scale_up_progress_timeout_fails_a_silent_stockout_over_in_minutes() -> None:
    general = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 1}
    groups = [stocked_out("spot"), general]
    objects = [web(4), priorities("10:\n  - spot\n1:\n  - general\n")]
    flags = {"expander": "priority", "scale-up-progress-timeout": "3m"}
    sim = Simulation(load(scenario(groups, objects, duration="30m", **flags)))
    result = sim.run()
    first = scale_ups(sim)[0]
    assert first.data["group"] == "spot"
    failover = next(e for e in scale_ups(sim) if e.data["group"] == "general")
    assert failover.t - first.t <= 180 + 20
    (failed, *_) = [e for e in ca_events(sim, "ScaleUpTimedOut") if e.data["group"] == "spot"]
    assert "no new instance" in failed.message
    assert sim.cloud.target_sizes()["spot"] == 0
    assert result.summary.pods.unschedulable_at_end == 0


def test_scale_up_progress_timeout_is_off_by_default_and_spares_a_slow_but_working_group() -> None:
    slow = {
        "name": "slow",
        "instanceType": "m5.large",
        "minSize": 0,
        "maxSize": 10,
        "provisioning": {"delay": "4m"},
    }
    groups = [slow]
    sim = Simulation(load(scenario(groups, [web(4)], duration="30m", **{"scale-up-progress-timeout": "3m"})))
    sim.run()
    assert ca_events(sim, "ScaleUpTimedOut") == []  # instances appear at once (Creating), then boot


# -- seed 002: an instance attached to the group by hand ------------------------------------------------


def _attached(**flags: Any) -> Simulation:
    group = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 2}
    actions = [{"at": "10m", "attachInstance": {"group": "general"}}]
    sim = Simulation(load(scenario([group], [web(2)], duration="1h", actions=actions, **flags)))
    sim.run()
    return sim


def test_an_instance_attached_by_hand_is_kept_not_terminated_as_unregistered() -> None:
    sim = _attached()
    (applied,) = events(sim, "scenario", "ActionApplied")
    (attached,) = applied.data["instances"]
    assert ca_events(sim, "DeleteUnregistered") == []
    assert attached not in [e.data["instance"] for e in events(sim, "cloud", "InstanceTerminated")]
    (kept,) = ca_events(sim, "UnregisteredInstanceKept")
    assert kept.data == {"group": "general", "instance": attached} and kept.t >= 600 + 900


def test_the_flag_terminates_it_as_cluster_autoscaler_does() -> None:
    sim = _attached(**{"delete-unregistered-foreign-instances": True})
    (applied,) = events(sim, "scenario", "ActionApplied")
    (attached,) = applied.data["instances"]
    (deleted,) = ca_events(sim, "DeleteUnregistered")
    assert deleted.data["instance"] == attached and deleted.t >= 600 + 900
    assert ca_events(sim, "UnregisteredInstanceKept") == []
