"""Regressions for the discrepancies the differential tests (``test_differential.py``) found."""

from __future__ import annotations

from typing import Any

from kubetide.conformance import run_case


def _pod(name: str, **kw: Any) -> dict[str, Any]:
    pod = {
        "name": name,
        "phase": "Running",
        "ready": True,
        "start_seconds_ago": 600,
        "ready_transition_seconds_ago": 600,
        "deleted": False,
        "containers": [{"name": "container1", "requests_milli": {"cpu": 100, "memory": 1000}}],
    }
    pod.update(kw)
    return pod


def test_unset_sample_time_and_unset_ready_transition_are_one_instant() -> None:
    # Go's zero time is a real instant: zero.Before(zero.Add(60s)) is true, so an initializing pod whose
    # sample and Ready transition are both unset has not had a full window yet: unready.
    case = {
        "kind": "replica_calc",
        "input": {
            "function": "group_pods",
            "resource": "cpu",
            "config": {
                "cpu_initialization_period_seconds": 120,
                "delay_of_initial_readiness_status_seconds": 10,
            },
            "pods": [_pod("young", start_seconds_ago=0, ready_transition_seconds_ago=None)],
            "pod_metrics": [{"pod": "young", "timestamp_seconds_ago": None, "window_seconds": 60}],
        },
        "expected": {"ready_count": 0, "unready": ["young"]},
    }
    assert run_case(case) == {"ready_count": 0, "unready": ["young"]}
    # With a zero-length window the two instants are equal and "before" is false: ready.
    case["input"]["pod_metrics"][0]["window_seconds"] = 0
    assert run_case(case) == {"ready_count": 1, "unready": []}


def _requests(resource: str, pod_level: dict[str, int], container: str | None = None) -> dict[str, Any]:
    return run_case(
        {
            "kind": "replica_calc",
            "input": {
                "function": "pod_requests",
                "resource": resource,
                "container": container,
                "feature_gates": {"PodLevelResources": True},
                "pods": [_pod("p", pod_requests_milli=pod_level)],
            },
            "expected": {"requests_milli": None},
        }
    )


def test_pod_level_requests_without_the_resource_fail_the_metric() -> None:
    # hpa.md 2.2: with pod-level requests declared, the request is the pod-level one; missing => error.
    assert _requests("memory", {"cpu": 800})["error"] is True
    assert _requests("cpu", {"cpu": 800}) == {"requests_milli": {"p": 800}}
    # A named container still wins over pod-level requests.
    assert _requests("memory", {"cpu": 800}, "container1") == {"requests_milli": {"p": 1000}}


def test_pod_level_requests_keep_their_exact_milli_value() -> None:
    # 1500m of memory is not rounded to whole bytes: the HPA divides by MilliValue().
    assert _requests("memory", {"memory": 1500}) == {"requests_milli": {"p": 1500}}


def _rate_limit(
    current: int, desired: int, scale_up: dict[str, Any], down_events: list[Any]
) -> dict[str, Any]:
    return run_case(
        {
            "kind": "normalize_behavior",
            "input": {
                "function": "apply_rate_limits",
                "current_replicas": current,
                "desired_replicas": desired,
                "min_replicas": 1,
                "max_replicas": 2**31 - 1,
                "behavior": {"scaleUp": scale_up, "scaleDown": None},
                "scale_up_events": [],
                "scale_down_events": down_events,
            },
            "expected": {"replicas": None, "reason": None},
        }
    )


def test_rate_limit_arithmetic_is_int32() -> None:
    # Upstream adds the Pods policy value to the period's start in int32: 5 + (2^31-1) wraps negative,
    # the limit falls back to the current count and the HPA cannot scale up at all.
    unlimited = {"policies": [{"type": "Pods", "value": 2**31 - 1, "periodSeconds": 60}]}
    assert _rate_limit(5, 10, unlimited, []) == {"replicas": 5, "reason": "ScaleUpLimit"}
    # Replica changes are summed in int32 too: two recent scale-downs of 2^31-1 wrap to -2, so the
    # period started at 5 - 2 = 3 replicas and 4 Pods allow 7.
    events = [{"replica_change": 2**31 - 1, "seconds_ago": 1}] * 2
    four = {"policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}]}
    assert _rate_limit(5, 10, four, events) == {"replicas": 7, "reason": "ScaleUpLimit"}


def test_utilization_percentage_is_an_int32_of_int64_arithmetic() -> None:
    # int32((metricsTotal * 100) / requestsTotal): 2^31 percent wraps to -2^31, and upstream proposes
    # ceil(-2^31 / 10 * 1) replicas; kubetide used to report a huge positive utilization instead.
    pods = [_pod("p", containers=[{"name": "c", "requests_milli": {"cpu": 100}}])]
    case = {
        "kind": "replica_calc",
        "input": {
            "function": "metric_replicas",
            "metric": {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 10}},
            },
            "current_replicas": 1,
            "tolerances": {"scaleUp": 0.1, "scaleDown": 0.1},
            "config": {
                "cpu_initialization_period_seconds": 120,
                "delay_of_initial_readiness_status_seconds": 10,
            },
            "pods": pods,
            "resource_metrics": [
                {
                    "pod": "p",
                    "timestamp_seconds_ago": 0,
                    "window_seconds": 60,
                    "containers": [{"name": "c", "usage_milli": {"cpu": 2**31}}],
                }
            ],
        },
        "expected": {"replicas": None, "utilization": None, "raw_value_milli": None},
    }
    assert run_case(case) == {"replicas": -214748364, "utilization": -(2**31), "raw_value_milli": 2**31}


def test_metric_fetch_errors_are_per_source_type() -> None:
    # "metric_fetch_errors: source types that fail": a failing ContainerResource source leaves a
    # Resource metric alone (kubetide used to fail both, as they share the resource metrics API).
    cpu = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
    }
    inp = {
        "config": {"tolerance": 0.1, "feature_gates": {"HPAScaleToZero": False}},
        "hpa": {
            "spec": {
                "scaleTargetRef": {"kind": "Deployment", "name": "d"},
                "maxReplicas": 10,
                "metrics": [cpu],
            },
            "status": {"currentReplicas": 2, "desiredReplicas": 2, "conditions": []},
        },
        "scale": {"spec_replicas": 2, "status_replicas": 2, "selector": "app=x"},
        "pods": [_pod("a"), _pod("b")],
        "resource_metrics": [
            {
                "pod": n,
                "timestamp_seconds_ago": 0,
                "window_seconds": 60,
                "containers": [{"name": "container1", "usage_milli": {"cpu": 100}}],
            }
            for n in ("a", "b")
        ],
        "controller_state": {"recommendations": None},
    }
    for failing, scaled in ((["ContainerResource"], True), (["Resource"], False)):
        case = {
            "kind": "controller_sync",
            "input": {**inp, "metric_fetch_errors": failing},
            "expected": {"scale_updated": None},
        }
        assert run_case(case) == {"scale_updated": scaled}


def test_first_sample_container_of_the_name_decides() -> None:
    # getContainerMetrics stops at the first container with the metric's name; if it lacks the
    # resource, the pod has no sample (a later container of the same name is not consulted).
    pod = _pod("p", containers=[{"name": "c", "requests_milli": {"cpu": 100}}])
    target = {"type": "Utilization", "averageUtilization": 50}
    inp = {
        "function": "metric_replicas",
        "metric": {
            "type": "ContainerResource",
            "containerResource": {"name": "cpu", "container": "c", "target": target},
        },
        "current_replicas": 1,
        "tolerances": {"scaleUp": 0.1, "scaleDown": 0.1},
        "config": {"cpu_initialization_period_seconds": 120, "delay_of_initial_readiness_status_seconds": 10},
        "pods": [pod],
        "resource_metrics": [
            {
                "pod": "p",
                "timestamp_seconds_ago": 0,
                "window_seconds": 60,
                "containers": [{"name": "c", "usage_milli": {}}, {"name": "c", "usage_milli": {"cpu": 100}}],
            }
        ],
    }
    assert run_case({"kind": "replica_calc", "input": inp, "expected": {"replicas": None}})["error"] is True
