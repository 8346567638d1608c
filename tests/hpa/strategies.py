"""Hypothesis strategies for HPA cases in the conformance format (``shared/spec/hpa.md`` section 10),
biased toward the boundaries: ratios exactly at 1 and 1 +- tolerance, ages equal to windows, periods and
the cpu initialization period, zero values, and values near the int32/int64 limits."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

Case = dict[str, Any]

CPU_INIT, READINESS_DELAY = 120, 10
MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1


def _case(kind: str, inp: dict[str, Any]) -> Case:
    return {"id": "generated", "kind": kind, "input": inp, "expected": {}}


# --- scalars ---------------------------------------------------------------------------------------

small = st.integers(0, 20)
huge_int32 = st.sampled_from([MAX_INT32, MAX_INT32 - 1, 2**30, 2**30 + 1, MAX_INT32 // 2 + 1])
replicas = st.one_of(
    st.integers(0, 12),
    st.integers(0, 200),
    st.sampled_from([0, 1, 2, 3, 4, 5, 10, 100]),
    huge_int32,
)
positive_milli = st.one_of(
    st.sampled_from([1, 10, 100, 150, 200, 250, 300, 500, 1000, 1500, 2000, 10000]),
    st.integers(1, 50_000),
)
huge_usage = st.sampled_from([2**31, 2**31 * 100, 2**40, 2**53 + 1, 2**62, MAX_INT64 // 3, MAX_INT64 // 100])
scalar_tolerances = st.one_of(
    st.sampled_from([0.1, 0.1, 0.05, 0.35, 0.0, 0.01, 0.2, 0.5, 1.0]), st.floats(0, 1, allow_nan=False)
)
tolerance_texts = st.one_of(
    st.sampled_from(
        ["0.05", "0.35", "0.1", "0.01", "0", "50m", "350m", "0.350", "5e-2", "1", "0.5", "0.15", "0.125"]
    ),
    st.integers(0, 99).map(lambda n: f"0.{n:02d}"),
    st.integers(0, 999).map(lambda n: f"{n}m"),
    st.sampled_from([0.05, 0.35, 0.1, 0.01, 0.15, 0.3]),  # a JSON number: the quantity of its text
)


@st.composite
def quantity_text(draw: st.DrawFn, milli: int) -> str:
    """A quantity string for a positive milli-value, in one of several spellings."""
    forms = [f"{milli}m"]
    if milli % 1000 == 0:
        forms.append(str(milli // 1000))
    else:
        whole, frac = divmod(milli, 1000)
        forms.append(f"{whole}.{frac:03d}".rstrip("0"))
    if milli % 1_000_000 == 0:
        forms.append(f"{milli // 1_000_000}k")
    forms.append(f"{milli * 1000}u")
    return draw(st.sampled_from(forms))


@st.composite
def sub_milli_quantity(draw: st.DrawFn) -> str:
    """Micro-units that are not whole milli-units: MilliValue rounds them up."""
    return f"{draw(st.integers(1, 3_000_000))}u"


def seconds_ago(*boundaries: int) -> st.SearchStrategy[int]:
    picks = sorted(
        {b for b in boundaries if b >= 0} | {b + 1 for b in boundaries} | {max(b - 1, 0) for b in boundaries}
    )
    return st.one_of(st.sampled_from(picks or [0]), st.integers(0, 700))


# --- pods and samples ------------------------------------------------------------------------------


@st.composite
def pod(
    draw: st.DrawFn, name: str, cpu_init: int, delay: int, resources: tuple[str, ...] = ("cpu",)
) -> dict[str, Any]:
    start = draw(st.one_of(st.none(), seconds_ago(0, cpu_init, delay, 600)))
    ready = draw(st.sampled_from([True, True, True, False, None]))
    if start is None:
        transition = draw(st.one_of(st.none(), seconds_ago(0, 600)))
    else:
        transition = draw(
            st.one_of(
                st.none(),
                st.sampled_from(
                    [start, max(start - delay, 0), max(start - delay + 1, 0), max(start - delay - 1, 0), 0]
                ),
                st.integers(0, start),
            )
        )

    def requests() -> dict[str, int]:
        out = {}
        for r in resources:
            if draw(st.integers(0, 20)) > 0:
                out[r] = draw(st.one_of(positive_milli, st.just(0)))
        return out

    containers = [
        {"name": f"container{i + 1}", "requests_milli": requests()} for i in range(draw(st.integers(0, 3)))
    ]
    out: dict[str, Any] = {
        "name": name,
        "phase": draw(st.sampled_from(["Running"] * 6 + ["Pending", "Failed", "Succeeded", "Unknown"])),
        "ready": ready,
        "start_seconds_ago": start,
        "ready_transition_seconds_ago": transition,
        "deleted": draw(st.integers(0, 9)) == 0,
        "containers": containers,
    }
    if draw(st.integers(0, 3)) == 0:
        out["initContainers"] = [
            {
                "name": f"init{i}",
                "requests_milli": requests(),
                **({"restartPolicy": "Always"} if draw(st.booleans()) else {}),
            }
            for i in range(draw(st.integers(1, 2)))
        ]
    if draw(st.integers(0, 4)) == 0:
        out["pod_requests_milli"] = {
            r: draw(positive_milli) * 1000 if r != "cpu" else draw(positive_milli)
            for r in resources
            if draw(st.booleans())
        }
    return out


@st.composite
def simple_pod(draw: st.DrawFn, name: str, request: int) -> dict[str, Any]:
    """A pod that is ready for every metric (old, Running, Ready) unless the draw says otherwise."""
    odd = draw(st.integers(0, 5)) == 0
    p = {
        "name": name,
        "phase": "Running",
        "ready": True,
        "start_seconds_ago": 600,
        "ready_transition_seconds_ago": 600,
        "deleted": False,
        "containers": [{"name": "container1", "requests_milli": {"cpu": request, "memory": request * 1000}}],
    }
    if odd:
        p.update(
            phase=draw(st.sampled_from(["Running", "Pending", "Failed", "Succeeded", "Unknown"])),
            ready=draw(st.sampled_from([True, False, None])),
            start_seconds_ago=draw(seconds_ago(0, CPU_INIT, 600)),
            ready_transition_seconds_ago=draw(seconds_ago(0, 60)),
            deleted=draw(st.booleans()),
        )
    if draw(st.integers(0, 12)) == 0:
        p["pod_requests_milli"] = draw(
            st.sampled_from(
                [{"cpu": request * 2}, {"memory": request * 1000}, {"cpu": request, "memory": 1500}]
            )
        )
    if draw(st.integers(0, 12)) == 0:
        p["initContainers"] = [
            {"name": "sidecar", "requests_milli": {"cpu": request}, "restartPolicy": "Always"}
        ]
    return p


def _near(draw: st.DrawFn, target: int, tol_down: float, tol_up: float) -> int:
    """A usage at or around the tolerance boundaries of ``target``."""
    ratio = draw(st.sampled_from([1.0, 1.0 + tol_up, 1.0 - tol_down, 0.5, 2.0, 1.5, 0.0, 3.7]))
    base = round(target * ratio)
    return max(0, base + draw(st.sampled_from([0, 0, 0, 1, -1])))


@st.composite
def resource_samples(
    draw: st.DrawFn,
    pods: list[dict[str, Any]],
    resource: str,
    center: int | None,
    window_boundary: bool = True,
) -> list[dict[str, Any]]:
    items = []
    for p in pods:
        if draw(st.integers(0, 6)) == 0:
            continue  # missing sample
        items.append(_sample(draw, p["name"], p, resource, center))
    for i in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        items.append(_sample(draw, f"ghost-{i}", None, resource, center))
    return items


def _sample(
    draw: st.DrawFn, name: str, p: dict[str, Any] | None, resource: str, center: int | None
) -> dict[str, Any]:
    window = draw(st.sampled_from([60, 30, 0, 15]))
    choices = [0, 30, 60, 120]
    if p is not None and p.get("ready_transition_seconds_ago") is not None:
        t = p["ready_transition_seconds_ago"]
        choices += [max(t - window, 0), max(t - window - 1, 0), max(t - window + 1, 0)]
    ts = draw(st.one_of(st.sampled_from(choices), st.none(), st.integers(0, 300)))

    def usage() -> int:
        if draw(st.integers(0, 25)) == 0:
            return draw(huge_usage)
        if center is not None and draw(st.integers(0, 3)) > 0:
            return center
        return draw(st.one_of(st.integers(0, 3000), st.sampled_from([0, 100, 500, 1000])))

    shape = draw(st.integers(0, 12))
    if shape == 0:
        containers: list[dict[str, Any]] = []
    elif shape == 2:  # a duplicated container name: the first one decides
        containers = [
            {"name": "container1", "usage_milli": {}},
            {"name": "container1", "usage_milli": {resource: usage()}},
        ]
    elif shape == 1:
        containers = [
            {"name": "container1", "usage_milli": {resource: usage()}},
            {"name": "", "usage_milli": {}},
        ]
    else:
        containers = [{"name": "container1", "usage_milli": {resource: usage()}}]
        if draw(st.integers(0, 3)) == 0:
            containers.append({"name": "container2", "usage_milli": {resource: usage()}})
    return {"pod": name, "timestamp_seconds_ago": ts, "window_seconds": window, "containers": containers}


# --- metric specs ------------------------------------------------------------------------------------


@st.composite
def metric_case_parts(draw: st.DrawFn) -> dict[str, Any]:
    """A metric spec and the world it is computed in (one ``metric_replicas`` input)."""
    tol_down, tol_up = draw(scalar_tolerances), draw(scalar_tolerances)
    source = draw(st.sampled_from(["Resource", "ContainerResource", "Pods", "Object", "External"]))
    resource = draw(st.sampled_from(["cpu", "cpu", "memory"]))
    target_type = draw(st.sampled_from(["Utilization", "Utilization", "AverageValue"]))
    n = draw(st.integers(0, 7))
    request = draw(st.sampled_from([100, 1000, 250, 333]))
    mixed = draw(st.booleans())
    pods = [
        draw(pod(f"test-pod-{i}", CPU_INIT, READINESS_DELAY, (resource,)))
        if mixed
        else draw(simple_pod(f"test-pod-{i}", request))
        for i in range(n)
    ]
    current = draw(st.one_of(st.just(n), replicas))
    inp: dict[str, Any] = {
        "function": "metric_replicas",
        "current_replicas": current,
        "tolerances": {"scaleUp": tol_up, "scaleDown": tol_down},
        "config": {
            "cpu_initialization_period_seconds": CPU_INIT,
            "delay_of_initial_readiness_status_seconds": READINESS_DELAY,
        },
        "pods": pods,
    }
    if source in ("Resource", "ContainerResource"):
        if target_type == "Utilization":
            util = draw(
                st.one_of(st.sampled_from([10, 20, 30, 50, 55, 80, 100, 150, 200]), st.integers(1, 300))
            )
            target: dict[str, Any] = {"type": "Utilization", "averageUtilization": util}
            center = _near(draw, util * request // 100, tol_down, tol_up)
        else:
            t = draw(positive_milli)
            text = draw(st.one_of(quantity_text(t), quantity_text(t), sub_milli_quantity()))
            target = {"type": "AverageValue", "averageValue": text}
            if text.endswith("u"):
                t = -(-int(text[:-1]) // 1000)
            if draw(st.integers(0, 8)) == 0:
                target["averageUtilization"] = draw(st.integers(1, 200))  # AverageValue wins
            center = _near(draw, t, tol_down, tol_up)
        if source == "Resource":
            inp["metric"] = {"type": "Resource", "resource": {"name": resource, "target": target}}
        else:
            inp["metric"] = {
                "type": "ContainerResource",
                "containerResource": {
                    "name": resource,
                    "container": draw(st.sampled_from(["container1", "container1", "container2", "nope"])),
                    "target": target,
                },
            }
        inp["resource_metrics"] = draw(resource_samples(pods, resource, center))
    elif source == "Pods":
        t = draw(positive_milli)
        inp["metric"] = {
            "type": "Pods",
            "pods": {
                "metric": {"name": "qps"},
                "target": {"type": "AverageValue", "averageValue": draw(quantity_text(t))},
            },
        }
        center = _near(draw, t, tol_down, tol_up)
        samples = []
        for p in pods:
            if draw(st.integers(0, 6)) > 0:
                samples.append(
                    {
                        "pod": p["name"],
                        "value_milli": center
                        if draw(st.booleans())
                        else draw(st.one_of(st.integers(0, 5 * t + 10), huge_usage)),
                    }
                )
        for i in range(draw(st.sampled_from([0, 0, 1]))):
            samples.append({"pod": f"ghost-{i}", "value_milli": draw(st.integers(0, 5 * t + 10))})
        inp["pod_custom_metrics"] = samples
    else:
        t = draw(positive_milli)
        avg = draw(st.booleans())
        key, kind = ("averageValue", "AverageValue") if avg else ("value", "Value")
        target = {"type": kind, key: draw(quantity_text(t))}
        if draw(st.integers(0, 15)) == 0:  # both set / type mismatch / nothing set
            target = draw(
                st.sampled_from(
                    [
                        {"type": "Value", "value": f"{t}m", "averageValue": f"{t}m"},
                        {"type": "AverageValue", "value": f"{t}m"},
                        {"type": "Value", "averageValue": f"{t}m"},
                        {"type": "Value"},
                    ]
                )
            )
        per = max(current, 1) if avg else 1
        total = _near(
            draw,
            t
            * (
                current
                if avg
                else max(sum(1 for p in pods if p["phase"] == "Running" and p["ready"] is True), 1)
            ),
            tol_down,
            tol_up,
        )
        del per
        if draw(st.integers(0, 12)) == 0:
            total = draw(st.sampled_from([MAX_INT64, MAX_INT64 - 1, 2**62, MAX_INT32, MAX_INT32 * 1000]))
        if source == "Object":
            inp["metric"] = {
                "type": "Object",
                "object": {
                    "describedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                    "metric": {"name": "qps"},
                    "target": target,
                },
            }
            inp["object_metric_value_milli"] = (
                draw(st.one_of(st.just(total), st.none())) if draw(st.integers(0, 10)) == 0 else total
            )
        else:
            inp["metric"] = {
                "type": "External",
                "external": {"metric": {"name": "qps", "selector": {}}, "target": target},
            }
            k = draw(st.integers(0, 3))
            values = [total // max(k, 1)] * k
            if k and draw(st.integers(0, 8)) == 0:
                values = [MAX_INT64 // 2 + 1] * (k + 1)
            inp["external_metric_values_milli"] = values
    return inp


def metric_replicas_cases() -> st.SearchStrategy[Case]:
    return metric_case_parts().map(lambda inp: _case("replica_calc", inp))


@st.composite
def group_pods_cases(draw: st.DrawFn) -> Case:
    cpu_init = draw(st.sampled_from([CPU_INIT, 300, 0, 30]))
    delay = draw(st.sampled_from([READINESS_DELAY, 30, 0]))
    pods = [draw(pod(f"pod-{i}", cpu_init, delay)) for i in range(draw(st.integers(0, 6)))]
    pod_metrics = []
    for p in pods:
        if draw(st.integers(0, 5)) == 0:
            continue
        window = draw(st.sampled_from([60, 30, 0, None]))
        w = window or 0
        t = p.get("ready_transition_seconds_ago")
        choices: list[int | None] = [0, 60, None]
        if t is not None:
            choices += [max(t - w, 0), max(t - w - 1, 0), max(t - w + 1, 0)]
        pod_metrics.append(
            {
                "pod": p["name"],
                "timestamp_seconds_ago": draw(st.sampled_from(choices)),
                "window_seconds": window,
            }
        )
    return _case(
        "replica_calc",
        {
            "function": "group_pods",
            "resource": draw(st.sampled_from(["cpu", "cpu", "memory", ""])),
            "config": {
                "cpu_initialization_period_seconds": cpu_init,
                "delay_of_initial_readiness_status_seconds": delay,
            },
            "pods": pods,
            "pod_metrics": pod_metrics,
        },
    )


@st.composite
def pod_requests_cases(draw: st.DrawFn) -> Case:
    resource = draw(st.sampled_from(["cpu", "memory"]))
    pods = [
        draw(pod(f"pod-{i}", CPU_INIT, READINESS_DELAY, ("cpu", "memory")))
        for i in range(draw(st.integers(0, 4)))
    ]
    return _case(
        "replica_calc",
        {
            "function": "pod_requests",
            "resource": resource,
            "container": draw(
                st.sampled_from([None, None, "container1", "container2", "init0", "init1", "nope"])
            ),
            "feature_gates": {"PodLevelResources": draw(st.booleans())},
            "pods": pods,
        },
    )


# --- behavior ------------------------------------------------------------------------------------------


policy = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["Pods", "Percent"]),
        "value": st.one_of(
            st.integers(1, 10),
            st.sampled_from([1, 4, 10, 50, 100, 150, 200, 1000]),
            st.integers(1, 1000),
            st.integers(1, 10).map(lambda _: MAX_INT32),
        ),
        "periodSeconds": st.one_of(st.sampled_from([15, 30, 60, 120, 300, 1800]), st.integers(1, 600)),
    }
)


@st.composite
def rules(draw: st.DrawFn, with_tolerance: bool = False) -> dict[str, Any] | None:
    if draw(st.integers(0, 5)) == 0:
        return None
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["stabilizationWindowSeconds"] = draw(
            st.one_of(st.sampled_from([0, 60, 120, 300]), st.integers(0, 600))
        )
    if draw(st.booleans()):
        out["selectPolicy"] = draw(st.sampled_from(["Max", "Min", "Disabled"]))
    if draw(st.booleans()):
        out["policies"] = draw(st.lists(policy, min_size=1, max_size=3))
    if with_tolerance and draw(st.booleans()):
        out["tolerance"] = draw(tolerance_texts)
    return out


@st.composite
def events(draw: st.DrawFn, periods: list[int]) -> list[dict[str, Any]]:
    bounds = [*periods, 15, 60]
    return [
        {
            "replica_change": draw(st.one_of(st.integers(0, 10), st.integers(0, 200), huge_int32)),
            "seconds_ago": draw(seconds_ago(*bounds)),
        }
        for _ in range(draw(st.integers(0, 4)))
    ]


def _periods(*rs: dict[str, Any] | None) -> list[int]:
    return [p["periodSeconds"] for r in rs if r for p in r.get("policies") or []]


@st.composite
def apply_rate_limits_cases(draw: st.DrawFn) -> Case:
    up, down = draw(rules()), draw(rules())
    min_r = draw(st.integers(0, 10))
    max_r = draw(st.integers(max(min_r, 1), 300))
    return _case(
        "normalize_behavior",
        {
            "function": "apply_rate_limits",
            "current_replicas": draw(replicas),
            "desired_replicas": draw(replicas),
            "min_replicas": min_r,
            "max_replicas": max_r,
            "behavior": {"scaleUp": up, "scaleDown": down},
            "scale_up_events": draw(events(_periods(up, down))),
            "scale_down_events": draw(events(_periods(up, down))),
        },
    )


@st.composite
def limit_cases(draw: st.DrawFn, up: bool) -> Case:
    r = draw(rules())
    return _case(
        "normalize_behavior",
        {
            "function": "scale_up_limit" if up else "scale_down_limit",
            "current_replicas": draw(replicas),
            "rules": r,
            "scale_up_events": draw(events(_periods(r))),
            "scale_down_events": draw(events(_periods(r))),
        },
    )


@st.composite
def recommendations(draw: st.DrawFn, *windows: int) -> list[dict[str, Any]]:
    return [
        {"replicas": draw(st.integers(0, 20)), "seconds_ago": draw(seconds_ago(*windows))}
        for _ in range(draw(st.integers(0, 5)))
    ]


@st.composite
def stabilize_cases(draw: st.DrawFn) -> Case:
    up_w = draw(st.sampled_from([0, 0, 60, 120, 300]))
    down_w = draw(st.sampled_from([0, 60, 180, 300]))
    return _case(
        "normalize_behavior",
        {
            "function": "stabilize",
            "current_replicas": draw(st.integers(0, 20)),
            "desired_replicas": draw(st.integers(0, 20)),
            "scale_up_stabilization_window_seconds": up_w,
            "scale_down_stabilization_window_seconds": down_w,
            "recommendations": draw(recommendations(up_w, down_w)),
        },
    )


@st.composite
def stabilize_scale_down_cases(draw: st.DrawFn) -> Case:
    w = draw(st.sampled_from([300, 60, 0, 120]))
    return _case(
        "normalize_default",
        {
            "function": "stabilize_scale_down",
            "downscale_stabilization_window_seconds": w,
            "recommendations": draw(recommendations(w)),
            "desired_replicas": draw(st.integers(0, 20)),
        },
    )


@st.composite
def apply_limits_cases(draw: st.DrawFn) -> Case:
    min_r = draw(st.integers(0, 10))
    return _case(
        "normalize_default",
        {
            "function": "apply_limits",
            "current_replicas": draw(replicas),
            "desired_replicas": draw(replicas),
            "min_replicas": min_r,
            "max_replicas": draw(st.integers(max(min_r, 1), 300)),
            "scale_up_limit_factor": draw(st.sampled_from([2.0, 8.0, 1.5, 1.0])),
            "scale_up_limit_minimum": draw(st.sampled_from([4.0, 1.0, 0.0, 2.5])),
        },
    )


@st.composite
def default_rules_cases(draw: st.DrawFn) -> Case:
    return _case(
        "normalize_behavior",
        {
            "function": "default_rules",
            "direction": draw(st.sampled_from(["scaleUp", "scaleDown"])),
            "rules": draw(rules()),
        },
    )


@st.composite
def store_scale_event_cases(draw: st.DrawFn) -> Case:
    r = draw(st.one_of(st.none(), rules()))
    prev = draw(st.integers(0, 30))
    new = draw(st.integers(0, 30).filter(lambda v: v != prev))
    periods = [*_periods(r), 60]
    previous = [
        {
            "replica_change": draw(st.integers(0, 10)),
            "seconds_ago": draw(seconds_ago(*periods)),
            "outdated": draw(st.booleans()),
        }
        for _ in range(draw(st.integers(0, 4)))
    ]
    return _case(
        "normalize_behavior",
        {
            "function": "store_scale_event",
            "direction": "up" if new > prev else "down",
            "rules": r,
            "previous_events": previous,
            "previous_replicas": prev,
            "new_replicas": new,
        },
    )


# --- controller_sync -----------------------------------------------------------------------------------


@st.composite
def controller_sync_cases(draw: st.DrawFn) -> Case:
    gate_zero = draw(st.booleans())
    gate_tol = draw(st.sampled_from([True, True, False]))
    cfg = {
        "tolerance": draw(st.sampled_from([0.1, 0.1, 0.05, 0.0, 0.2])),
        "cpu_initialization_period_seconds": CPU_INIT,
        "delay_of_initial_readiness_status_seconds": READINESS_DELAY,
        "downscale_stabilization_window_seconds": draw(st.sampled_from([300, 300, 60, 0])),
        "scale_up_limit_factor": draw(st.sampled_from([2.0, 8.0])),
        "scale_up_limit_minimum": 4.0,
        "feature_gates": {
            "HPAConfigurableTolerance": gate_tol,
            "HPAScaleToZero": gate_zero,
            "PodLevelResources": draw(st.booleans()),
        },
    }
    request = draw(st.sampled_from([1000, 500, 200]))
    min_r = draw(st.one_of(st.none(), st.integers(0, 5)))
    max_r = draw(st.integers(max(min_r or 1, 1), 12))
    lowest = 1 if min_r is None else max(min_r, 1)
    where = draw(st.sampled_from(["in-range"] * 6 + ["zero", "anywhere"]))
    if where == "in-range":
        spec_replicas = draw(st.integers(lowest, max(lowest, max_r)))
    else:
        spec_replicas = 0 if where == "zero" else draw(st.integers(0, 14))
    status_replicas = draw(st.one_of(st.just(spec_replicas), st.just(spec_replicas), st.integers(0, 14)))
    n = draw(st.one_of(st.just(min(spec_replicas, 8)), st.just(min(spec_replicas, 8)), st.integers(0, 6)))
    pods = [draw(simple_pod(f"test-pod-{i}", request)) for i in range(n)]

    metrics: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(
            st.sampled_from(
                [
                    "cpu-util",
                    "cpu-util",
                    "cpu-value",
                    "memory-util",
                    "container",
                    "pods",
                    "object-value",
                    "object-avg",
                    "external-value",
                    "external-avg",
                    "invalid",
                ]
            )
        )
        if kind == "cpu-util":
            metrics.append(
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {
                            "type": "Utilization",
                            "averageUtilization": draw(st.sampled_from([30, 50, 80, 100, 150])),
                        },
                    },
                }
            )
        elif kind == "cpu-value":
            metrics.append(
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {
                            "type": "AverageValue",
                            "averageValue": draw(quantity_text(draw(positive_milli))),
                        },
                    },
                }
            )
        elif kind == "memory-util":
            metrics.append(
                {
                    "type": "Resource",
                    "resource": {
                        "name": "memory",
                        "target": {
                            "type": "Utilization",
                            "averageUtilization": draw(st.sampled_from([50, 100])),
                        },
                    },
                }
            )
        elif kind == "container":
            metrics.append(
                {
                    "type": "ContainerResource",
                    "containerResource": {
                        "name": "cpu",
                        "container": "container1",
                        "target": {
                            "type": "Utilization",
                            "averageUtilization": draw(st.sampled_from([30, 50, 100])),
                        },
                    },
                }
            )
        elif kind == "pods":
            metrics.append(
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "qps"},
                        "target": {
                            "type": "AverageValue",
                            "averageValue": draw(quantity_text(draw(positive_milli))),
                        },
                    },
                }
            )
        elif kind.startswith("object"):
            avg = kind == "object-avg"
            t = draw(quantity_text(draw(positive_milli)))
            metrics.append(
                {
                    "type": "Object",
                    "object": {
                        "describedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                        "metric": {"name": "qps"},
                        "target": {"type": "AverageValue", "averageValue": t}
                        if avg
                        else {"type": "Value", "value": t},
                    },
                }
            )
        elif kind.startswith("external"):
            avg = kind == "external-avg"
            t = draw(quantity_text(draw(positive_milli)))
            metrics.append(
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "qps", "selector": {}},
                        "target": {"type": "AverageValue", "averageValue": t}
                        if avg
                        else {"type": "Value", "value": t},
                    },
                }
            )
        else:
            metrics.append({"type": "CheddarCheese"})

    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "v1", "kind": "ReplicationController", "name": "test-rc"},
        "maxReplicas": max_r,
    }
    if min_r is not None:
        spec["minReplicas"] = min_r
    if metrics or draw(st.booleans()):
        spec["metrics"] = metrics
    behavior = None
    if draw(st.booleans()):
        behavior = {}
        if draw(st.booleans()):
            behavior["scaleUp"] = draw(rules(with_tolerance=True))
        if draw(st.booleans()):
            behavior["scaleDown"] = draw(rules(with_tolerance=True))
        spec["behavior"] = behavior

    conditions = []
    if draw(st.integers(0, 2)) == 0:
        conditions.append(
            {"type": "ScaledToZero", "status": draw(st.sampled_from(["True", "False"])), "reason": "x"}
        )
    if draw(st.integers(0, 4)) == 0:
        conditions.append({"type": "AbleToScale", "status": "True", "reason": "SucceededRescale"})
    if draw(st.integers(0, 4)) == 0:
        conditions.insert(0, {"type": "ScalingLimited", "status": "True", "reason": "TooManyReplicas"})

    qps_center = draw(positive_milli)
    resource_metrics = draw(
        resource_samples(
            pods,
            "cpu",
            draw(
                st.one_of(
                    st.none(),
                    st.sampled_from([request // 2, request, request * 2, request // 4, 0, request * 3 // 10]),
                )
            ),
        )
    )
    for item in resource_metrics:
        for c in item["containers"]:
            if c.get("usage_milli") and draw(st.booleans()):
                c["usage_milli"]["memory"] = draw(st.integers(0, request * 2000))
    periods = _periods(*(behavior or {}).values()) if behavior else []
    windows = [r.get("stabilizationWindowSeconds", 0) for r in (behavior or {}).values() if r]
    recs = draw(
        st.one_of(
            st.none(), recommendations(cfg["downscale_stabilization_window_seconds"], 0, 60, 300, *windows)
        )
    )
    fetch_errors = (
        draw(
            st.lists(
                st.sampled_from(["Resource", "ContainerResource", "Pods", "Object", "External"]),
                max_size=2,
                unique=True,
            )
        )
        if draw(st.integers(0, 3)) == 0
        else []
    )
    return _case(
        "controller_sync",
        {
            "config": cfg,
            "hpa": {
                "name": "test-hpa",
                "namespace": "test-namespace",
                "spec": spec,
                "status": {
                    "currentReplicas": spec_replicas,
                    "desiredReplicas": draw(st.integers(0, 10)),
                    "conditions": conditions,
                },
            },
            "scale": {
                "spec_replicas": spec_replicas,
                "status_replicas": status_replicas,
                "selector": draw(st.sampled_from(["name=test-pod"] * 12 + ["", "name in (a"])),
                "get_error": draw(st.sampled_from([False] * 15 + [True])),
                "update_error": draw(st.sampled_from([False] * 10 + [True])),
            },
            "pods": pods,
            "resource_metrics": resource_metrics,
            "pod_custom_metrics": {
                "qps": [
                    {
                        "pod": p["name"],
                        "value_milli": draw(
                            st.sampled_from([qps_center, qps_center * 2, 0, qps_center // 2])
                        ),
                    }
                    for p in pods
                    if draw(st.integers(0, 5))
                ]
            },
            "object_metrics": {
                "qps": draw(
                    st.one_of(st.sampled_from([0, qps_center, qps_center * 3]), st.integers(0, 10**6))
                )
            }
            if draw(st.integers(0, 8))
            else {},
            "external_metrics": {
                "qps": draw(st.lists(st.sampled_from([0, qps_center, qps_center * 2]), max_size=3))
            },
            "metric_fetch_errors": fetch_errors,
            "controller_state": {
                "recommendations": recs,
                "scale_up_events": draw(events(periods)),
                "scale_down_events": draw(events(periods)),
            },
        },
    )


ALL: dict[str, st.SearchStrategy[Case]] = {
    "metric_replicas": metric_replicas_cases(),
    "group_pods": group_pods_cases(),
    "pod_requests": pod_requests_cases(),
    "stabilize_scale_down": stabilize_scale_down_cases(),
    "apply_limits": apply_limits_cases(),
    "apply_rate_limits": apply_rate_limits_cases(),
    "stabilize": stabilize_cases(),
    "scale_up_limit": limit_cases(True),
    "scale_down_limit": limit_cases(False),
    "default_rules": default_rules_cases(),
    "store_scale_event": store_scale_event_cases(),
    "controller_sync": controller_sync_cases(),
}
