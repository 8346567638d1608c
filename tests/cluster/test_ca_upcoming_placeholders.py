"""Upcoming nodes enter the loop's snapshot as named copies of one placeholder view per group: the
snapshot, its pod index and every placement on it are those of one ``estimation_node`` per name added
node by node (the plain path), and the views listed are those nodes."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.loop.scaleup_decision import estimation_node
from kubetide.model.node import HOSTNAME_LABEL, ZONE_LABEL
from kubetide.model.scheduling_terms import PodAffinityTerm, Taint
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.snapshot import ClusterSnapshot
from scheduling.builders import node, pod, selector, spread

_APART = (PodAffinityTerm(selector(app="web"), HOSTNAME_LABEL),)


@st.composite
def _templates(draw: st.DrawFn) -> NodeTemplate:
    labels = {"group": draw(st.sampled_from(["a", "b"]))}
    if draw(st.booleans()):
        labels[HOSTNAME_LABEL] = "template-host"
    view = node(
        "template",
        cpu=draw(st.sampled_from([1000, 2000])),
        zone=draw(st.sampled_from([None, "z1", "z2"])),
        labels=labels,
        taints=draw(st.sampled_from([(), (Taint("dedicated", "x", "NoSchedule"),)])),
    )
    daemons = tuple(pod(f"ds-{k}", cpu=100) for k in range(draw(st.integers(0, 2))))
    return NodeTemplate(view, daemons)


def _state(snap: ClusterSnapshot) -> tuple[Any, ...]:
    n = snap.num_slots
    index = snap.pod_index()
    return (
        [snap.node(i) for i in range(n)],
        [snap.classes[c] for c in snap.node_class_ids.tolist()],
        snap.allocatable.tolist(),
        snap.active.tolist(),
        {k: _domains(index.key(k).values, index.codes(k).tolist()) for k in _KEYS},
    )


def _domains(values: dict[str, int], codes: list[int]) -> list[str | None]:
    """Each slot's domain by its label value (codes are numbered as met: compared by value)."""
    named = {code: value for value, code in values.items()}
    return [named[c] if c >= 0 else None for c in codes]


_KEYS = (HOSTNAME_LABEL, ZONE_LABEL)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(_templates(), st.integers(1, 4)), min_size=1, max_size=3),
    st.booleans(),
    st.integers(1, 12),
)
def test_named_copies_are_the_placeholders_added_one_by_one(
    groups: list[tuple[NodeTemplate, int]], index_first: bool, pending: int
) -> None:
    def base() -> ClusterSnapshot:
        snap = ClusterSnapshot([node("n1", cpu=500, zone="z1", labels={HOSTNAME_LABEL: "n1"})])
        if index_first:
            snap.pod_index()  # the index is told of the nodes added (else built from them)
        return snap

    plain, copies = base(), base()
    expected, listed = [], []
    for g, (template, count) in enumerate(groups):
        names = [f"g{g}-upcoming-{i}" for i in range(count)]
        for name in names:
            view = estimation_node(template, name)
            plain.add_node(view)
            expected.append(view)
        first = copies.add_template_nodes(estimation_node(template, names[0]), names)
        listed.extend(map(copies.node, range(first, first + count)))
    assert listed == expected
    assert _state(copies) == _state(plain)
    # Pods one per host and spread over zones place alike on both.
    pods = [
        pod(f"p{k}", cpu=300, labels={"app": "web"}, anti=_APART, spread=(spread(ZONE_LABEL, app="web"),))
        for k in range(pending)
    ]
    placed = [HintingSimulator().try_schedule(s, pods) for s in (plain, copies)]
    assert [p.name for p in placed[0]] == [p.name for p in placed[1]]
    assert [list(map(id, plain.pods_on(i))) for i in range(plain.num_slots)] == [
        list(map(id, copies.pods_on(i))) for i in range(copies.num_slots)
    ]
