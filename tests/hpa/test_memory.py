"""The published memory: a controller given it decides as the one that kept all of its memory, it is
small, and it reads back from its document."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.memory import document, published, read_document, rfc3339
from kubetide.hpa.state import HPAState, Recommendation, Remembered, ScaleEvent
from kubetide.model.errors import ManifestError

from .world import World, hpa

policies = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["Pods", "Percent"]),
            "value": st.integers(1, 200),
            "periodSeconds": st.sampled_from([5, 15, 30, 60, 120]),
        }
    ),
    min_size=1,
    max_size=2,
)
scaling_rules = st.fixed_dictionaries(
    {},
    optional={
        "stabilizationWindowSeconds": st.sampled_from([0, 15, 30, 60, 300]),
        "selectPolicy": st.sampled_from(["Max", "Min"]),
        "policies": policies,
    },
)
behaviors = st.one_of(
    st.none(), st.fixed_dictionaries({}, optional={"scaleUp": scaling_rules, "scaleDown": scaling_rules})
)
# Steps between syncs, mostly a sync period, with the windows' and periods' boundaries among them; the
# load moves between a few levels so the proposals go up and down inside the windows.
steps = st.lists(
    st.tuples(
        st.one_of(
            st.just(15.0), st.sampled_from([0.5, 1.0, 5.0, 14.0, 16.0, 30.0, 45.0, 60.0, 120.0, 299.0, 300.0])
        ),
        st.sampled_from([0, 150, 300, 500, 700, 900, 1200, 2000, 3000]),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=500)
@given(
    behavior=behaviors,
    window=st.sampled_from([0.0, 30.0, 60.0, 300.0]),
    replicas=st.integers(1, 8),
    steps=steps,
)
def test_a_controller_given_the_published_memory_decides_as_the_one_that_kept_it(
    behavior: dict[str, Any] | None, window: float, replicas: int, steps: list[tuple[float, int]]
) -> None:
    """At every sync, a controller restored from what the acting one published after its previous
    sync decides the same: the same proposal, stabilized count, limit and rescale. (Upstream's
    ``stabilizeRecommendation*`` and ``convertDesiredReplicasWithBehaviorRate`` read the memory only
    through window maxima, minima and sums, which the published memory keeps.)"""
    config = HPAConfig(downscale_stabilization=window)
    world = World(replicas=replicas)
    target = hpa(min_replicas=1, max_replicas=30, behavior=behavior)
    kept = HorizontalController(world, world, config)
    now = 0.0
    last: float | None = None
    for step, usage in steps:
        now += step
        world.now, world.usage_per_pod = now, usage
        restored = HorizontalController(world, world, config)
        memory = kept.memory(target.key)
        if memory is not None and last is not None:
            restored.restore(target.key, published(memory, target, config, last).state())
        expected = kept.decide(target, now)
        got = restored.decide(target, now)
        assert (got.desired_replicas, got.rescale, got.normalization) == (
            expected.desired_replicas,
            expected.rescale,
            expected.normalization,
        )
        result = kept.complete(expected, kept.write(expected), now)
        target = target.with_status(result.status)
        last = now


def test_a_steady_hpa_publishes_one_recommendation_and_a_held_scale_down_its_high_one() -> None:
    config = HPAConfig(downscale_stabilization=300.0)
    target = hpa()
    steady = HPAState([Recommendation(3, t) for t in (0.0, 15.0, 30.0, 45.0)])
    assert published(steady, target, config, 45.0).recommendations == (Recommendation(3, 45.0),)
    held = HPAState(
        [Recommendation(3, 0.0), Recommendation(6, 15.0), Recommendation(6, 30.0), Recommendation(2, 45.0)]
    )
    assert published(held, target, config, 45.0).recommendations == (
        Recommendation(6, 30.0),
        Recommendation(2, 45.0),
    )


def test_a_low_recommendation_before_a_high_one_is_kept_for_the_scale_up_window() -> None:
    behavior = {"scaleUp": {"stabilizationWindowSeconds": 60}}
    rising = HPAState([Recommendation(2, 0.0), Recommendation(5, 15.0)])
    assert published(rising, hpa(behavior=behavior), HPAConfig(), 15.0).recommendations == (
        Recommendation(2, 0.0),
        Recommendation(5, 15.0),
    )


def test_entries_older_than_every_window_and_period_go_and_never_synced_stays_none() -> None:
    config = HPAConfig(downscale_stabilization=60.0)
    behavior = {
        "scaleUp": {"stabilizationWindowSeconds": 30, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]},
        "scaleDown": {"stabilizationWindowSeconds": 120, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}]},
    }  # fmt: skip
    state = HPAState(
        [Recommendation(9, 79.5), Recommendation(8, 80.0), Recommendation(4, 200.0)],
        [ScaleEvent(1, 139.5), ScaleEvent(2, 150.0)],
        [ScaleEvent(3, 140.0), ScaleEvent(1, 190.0)],
    )
    out = published(state, hpa(behavior=behavior), config, 200.0)
    # The longest window is 120 s and the longest period 60 s: what is exactly that old stays.
    assert out.recommendations == (Recommendation(8, 80.0), Recommendation(4, 200.0))
    assert [e.timestamp for e in out.scale_up_events] == [150.0]
    assert [e.timestamp for e in out.scale_down_events] == [140.0, 190.0]
    everything_old = published(HPAState([Recommendation(3, 0.0)]), hpa(), config, 500.0)
    assert everything_old.recommendations == ()  # synced, but nothing left to read: no seed either
    assert published(HPAState(), hpa(), config, 500.0).recommendations is None


def test_the_document_reads_back_to_the_microsecond() -> None:
    memory = Remembered(
        (Recommendation(3, 1_780_000_000.25), Recommendation(5, 1_780_000_015.5)),
        (ScaleEvent(2, 1_780_000_015.5),),
        (),
    )
    doc = document(memory, "uid-1")
    assert doc == {
        "uid": "uid-1",
        "recommendations": [
            {"replicas": 3, "timestamp": "2026-05-28T20:26:40.250000Z"},
            {"replicas": 5, "timestamp": "2026-05-28T20:26:55.500000Z"},
        ],
        "scaleUpEvents": [{"replicaChange": 2, "timestamp": "2026-05-28T20:26:55.500000Z"}],
        "scaleDownEvents": [],
    }
    uid, state = read_document(doc, "memory")
    assert uid == "uid-1" and Remembered.of(state) == memory
    assert rfc3339(0.0) == "1970-01-01T00:00:00.000000Z"
    assert read_document(document(Remembered(None)), "m")[1].recommendations is None


def test_a_wrong_document_names_every_field_at_once() -> None:
    with pytest.raises(ManifestError) as caught:
        read_document(
            {
                "uid": 7,
                "recommendations": [{"replicas": -1, "timestamp": "2026-01-01T00:00:00Z"}, {"replicas": 2}],
                "scaleUpEvents": "many",
                "scaleDownEvents": [{"replicaChange": 0, "timestamp": "soon"}],
                "recomendations": [],
            },
            "memory",
        )
    assert [str(e) for e in caught.value.errors] == [
        "memory.recomendations: unknown field (known: uid, recommendations, scaleUpEvents, scaleDownEvents)",
        "memory.uid: must be a string, got int",
        "memory.recommendations[0].replicas: must be >= 0 (got -1)",
        "memory.recommendations[1].timestamp: is required",
        "memory.scaleUpEvents: must be a list, got a string",
        "memory.scaleDownEvents[0].replicaChange: must be >= 1 (got 0)",
    ]
