"""The indexed pod grouping agrees with the plain reference ``group_pods`` on any pods and samples."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.hpa.podgroups import group_pods
from kubetide.hpa.podindex import PodIndex
from kubetide.hpa.ports import NEVER, PodMetric
from kubetide.model.pod import Pod

NOW = 10_000.0
times = st.one_of(st.none(), st.integers(0, 1200).map(lambda ago: NOW - ago))


@st.composite
def pods_and_metrics(draw: st.DrawFn) -> tuple[list[Pod], dict[str, PodMetric]]:
    n = draw(st.integers(0, 12))
    pods, metrics = [], {}
    for i in range(n):
        name = f"p{i}"
        pods.append(
            Pod(
                name=name,
                phase=draw(st.sampled_from(["Running", "Pending", "Failed", "Succeeded", "Unknown"])),
                ready=draw(st.sampled_from([True, False, None])),
                start_time=draw(times),
                ready_transition=draw(times),
                deletion_time=NOW if draw(st.booleans()) and draw(st.booleans()) else None,
            )
        )
        if draw(st.booleans()):
            ts = draw(times)
            metrics[name] = PodMetric(
                1, NEVER if ts is None else ts, float(draw(st.sampled_from([0, 30, 60])))
            )
    for j in range(draw(st.integers(0, 2))):  # samples for pods that don't exist
        metrics[f"ghost{j}"] = PodMetric(1, NOW, 30.0)
    return pods, metrics


@settings(max_examples=300)
@given(
    data=pods_and_metrics(),
    resource=st.sampled_from(["cpu", "memory", ""]),
    period=st.sampled_from([0.0, 120.0, 300.0]),
    delay=st.sampled_from([0.0, 10.0, 30.0]),
)
def test_indexed_grouping_matches_reference(
    data: tuple[list[Pod], dict[str, PodMetric]], resource: str, period: float, delay: float
) -> None:
    pods, metrics = data
    expected = group_pods(pods, metrics, resource, NOW, period, delay)
    index = PodIndex.build(pods, delay)
    actual = index.group(metrics, resource, NOW, period)
    fields = ("ready_count", "unready", "missing", "ignored")
    assert [getattr(actual, f) for f in fields] == [getattr(expected, f) for f in fields]
    # "exact": the samples are precisely the pods that count (so their requests' sum can be reused).
    counted = {p.name for p in pods if p.name not in expected.ignored and p.name not in expected.unready}
    assert actual.exact == (set(metrics) == counted and not expected.missing)
