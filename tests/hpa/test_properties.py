"""Invariants of the HPA decision, over random inputs."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.hpa import with_behavior
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.podgroups import PodGroups
from kubetide.hpa.ports import PodMetric
from kubetide.hpa.replicas import utilization_replicas
from kubetide.hpa.state import Recommendation
from kubetide.hpa.tolerances import Tolerances

from .world import World, hpa


@given(
    usages=st.lists(st.integers(0, 4000), min_size=1, max_size=30),
    target=st.integers(1, 200),
    tolerance=st.floats(0, 0.5),
)
def test_within_tolerance_nothing_changes(usages: list[int], target: int, tolerance: float) -> None:
    names = [f"p{i}" for i in range(len(usages))]
    metrics = {n: PodMetric(u) for n, u in zip(names, usages, strict=True)}
    requests = dict.fromkeys(names, 1000)
    groups = PodGroups(len(names), frozenset(), frozenset(), frozenset())
    tol = Tolerances(tolerance, tolerance)
    calc, utilization, _ = utilization_replicas(len(names), target, metrics, requests, groups, tol)
    if tol.within(utilization / target):
        assert (calc.replicas, calc.outcome) == (len(names), "within-tolerance")
    else:
        assert (calc.replicas, calc.outcome) == (math.ceil(utilization / target * len(names)), "scaled")


@settings(max_examples=60, deadline=None)
@given(
    min_replicas=st.integers(1, 5),
    span=st.integers(0, 15),
    usages=st.lists(st.integers(0, 5000), min_size=1, max_size=12),
    with_behavior=st.booleans(),
)
def test_desired_stays_within_min_and_max(
    min_replicas: int, span: int, usages: list[int], with_behavior: bool
) -> None:
    max_replicas = min_replicas + span
    target = hpa(min_replicas, max_replicas, 50, {} if with_behavior else None)
    world = World(replicas=min_replicas)
    controller = HorizontalController(world, world, HPAConfig(downscale_stabilization=0))
    for step, usage in enumerate(usages):
        world.now = step * 15.0
        world.usage_per_pod = usage
        result = controller.reconcile(target, world.now)
        assert min_replicas <= result.desired_replicas <= max_replicas
        assert min_replicas <= world.replicas <= max_replicas


@given(
    recs=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 1000)), max_size=12),
    current=st.integers(1, 50),
    proposal=st.integers(0, 50),
    down_window=st.integers(0, 600),
    up_window=st.integers(0, 600),
)
def test_scale_down_never_goes_below_a_recommendation_in_the_window(
    recs: list[tuple[int, int]], current: int, proposal: int, down_window: int, up_window: int
) -> None:
    now = 10_000.0
    stored = [Recommendation(r, now - age) for r, age in recs]
    stabilized, _, _ = with_behavior.stabilize(stored, current, proposal, now, up_window, down_window)
    if stabilized < current:
        in_window = [r for r, age in recs if age < down_window]
        assert stabilized >= max([proposal, *in_window])


@given(
    recs=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 1000)), max_size=12),
    proposal=st.integers(0, 50),
    window=st.integers(0, 600),
)
def test_default_stabilization_keeps_the_highest_recent_recommendation(
    recs: list[tuple[int, int]], proposal: int, window: int
) -> None:
    from kubetide.hpa.without_behavior import stabilize_scale_down

    now = 10_000.0
    stored = [Recommendation(r, now - age) for r, age in recs]
    result = stabilize_scale_down(stored, proposal, now, window)
    assert result == max([proposal, *(r for r, age in recs if age <= window)])


@settings(max_examples=40, deadline=None)
@given(
    pods_per_period=st.integers(1, 6),
    period=st.sampled_from([15, 30, 60, 120]),
    usages=st.lists(st.integers(0, 8000), min_size=2, max_size=30),
    sync=st.sampled_from([5, 15, 30]),
)
def test_scale_up_policy_never_adds_more_per_period_than_it_states(
    pods_per_period: int, period: int, usages: list[int], sync: int
) -> None:
    rules = {
        "scaleUp": {
            "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": pods_per_period, "periodSeconds": period}],
        },
        "scaleDown": {"selectPolicy": "Disabled"},
    }
    target = hpa(1, 1000, 50, rules)
    world = World(replicas=2)
    controller = HorizontalController(world, world)
    for step, usage in enumerate(usages):
        world.now = float(step * sync)
        world.usage_per_pod = usage
        controller.reconcile(target, world.now)
    changes = []
    previous = 2
    for t, replicas in world.writes:
        assert replicas >= previous  # scale-down is disabled
        changes.append((t, replicas - previous))
        previous = replicas
    for t, _ in changes:
        added = sum(c for ts, c in changes if t - period < ts <= t)
        assert added <= pods_per_period


@settings(max_examples=40, deadline=None)
@given(
    percent=st.integers(1, 100),
    period=st.sampled_from([30, 60]),
    usages=st.lists(st.integers(0, 1000), min_size=2, max_size=20),
)
def test_scale_down_percent_policy_bounds_the_net_drop_per_period(
    percent: int, period: int, usages: list[int]
) -> None:
    rules = {
        "scaleDown": {
            "stabilizationWindowSeconds": 0,
            "policies": [{"type": "Percent", "value": percent, "periodSeconds": period}],
        }
    }
    target = hpa(1, 1000, 50, rules)
    world = World(replicas=200)
    controller = HorizontalController(world, world)
    for step, usage in enumerate(usages):
        world.now = float(step * 15)
        world.usage_per_pod = usage
        controller.reconcile(target, world.now)
    previous, changes = 200, []
    for t, replicas in world.writes:
        changes.append((t, replicas - previous, replicas))
        previous = replicas
    # A scale-down leaves the net drop within its period at most `percent` of the period's start.
    for t, change, replicas in changes:
        if change > 0:
            continue
        net_drop = -sum(c for ts, c, _ in changes if t - period < ts <= t)
        period_start = replicas + net_drop
        assert replicas >= min(int(float(period_start) * (1 - float(percent) / 100)), period_start)
