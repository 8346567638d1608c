"""Property tests for topology spread and inter-pod (anti-)affinity: the pod index kept in step with a
snapshot equals one built afresh, whatever happened to the snapshot (binds, unbinds, forks, reverts,
copies, nodes added, relabelled, removed, truncated, renumbered), and every decision made from it
(filters per node, masks, the estimate, the removal simulation, the filter of schedulable pods) is the
plain reference's (``tests/scheduling/reference.py``: upstream's PreFilter and Filter written out pod by pod).

Worlds are small and dense in the cases that matter: 2 namespaces, labels from a few values, terms
with In / NotIn / Exists selectors over hostname, zone and region keys, several terms per pod,
``matchLabelKeys``, ``minDomains``, both inclusion policies, terminating pods, nodes without the zone or
region label, two nodes sharing a hostname label, taints and node selectors.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from kubetide.model.node import HOSTNAME_LABEL, ZONE_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import PodAffinityTerm, Taint, Toleration, TopologySpreadConstraint
from kubetide.model.selectors import LabelSelector, Requirement
from kubetide.scheduling.estimator import estimate
from kubetide.scheduling.fit import FitChecker
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.pod_index import ClassCounts, PodIndex
from kubetide.scheduling.predicates import DOMAIN_FILTERS
from kubetide.scheduling.removal_simulation import must_move, simulate_removals
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import GI, MI, node, owner, pod
from .reference import ref_estimate, ref_failure, ref_fits, ref_hinting, ref_remove

SETTINGS = settings(
    max_examples=int(os.environ.get("KT_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
REGION = "topology.kubernetes.io/region"
KEYS = [HOSTNAME_LABEL, ZONE_LABEL, REGION]
TAINT = Taint("dedicated", "batch", "NoSchedule")


@st.composite
def selectors(draw: Any) -> LabelSelector:
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return LabelSelector((Requirement("app", "In", (draw(st.sampled_from(["a", "b", "c"])),)),))
    if kind == 1:
        return LabelSelector((Requirement("app", "In", ("a", "b")),))
    if kind == 2:
        return LabelSelector((Requirement("app", "NotIn", ("a",)),))
    if kind == 3:
        return LabelSelector((Requirement("tier", "Exists"),))
    return LabelSelector((Requirement("app", "In", ("b", "c")), Requirement("tier", "In", ("x",))))


@st.composite
def terms(draw: Any) -> PodAffinityTerm:
    namespaces = draw(st.sampled_from([(), (), ("ns1",), ("ns1", "ns2")]))
    return PodAffinityTerm(
        draw(selectors()), draw(st.sampled_from(KEYS)), namespaces, draw(st.integers(0, 5)) == 0
    )


@st.composite
def spreads(draw: Any) -> tuple[TopologySpreadConstraint, ...]:
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True, min_size=1, max_size=2))
    return tuple(
        TopologySpreadConstraint(
            draw(st.integers(1, 2)),
            key,
            "DoNotSchedule",
            draw(selectors()),
            draw(st.sampled_from([None, None, 1, 2, 3])),
            draw(st.sampled_from(["Honor", "Ignore"])),
            draw(st.sampled_from(["Ignore", "Ignore", "Honor"])),
            draw(st.sampled_from([(), ("tier",)])),
        )
        for key in keys
    )


@st.composite
def constrained_pods(draw: Any, name: str) -> Pod:
    labels = {"app": draw(st.sampled_from(["a", "b", "c"]))}
    if draw(st.booleans()):
        labels["tier"] = draw(st.sampled_from(["x", "y"]))
    kw: dict[str, Any] = {}
    if draw(st.integers(0, 2)) == 0:
        kw["anti"] = tuple(draw(st.lists(terms(), min_size=1, max_size=2)))
    if draw(st.integers(0, 4)) == 0:
        kw["affine"] = tuple(draw(st.lists(terms(), min_size=1, max_size=2)))
    if draw(st.integers(0, 2)) == 0:
        kw["spread"] = draw(spreads())
    if draw(st.integers(0, 4)) == 0:
        kw["node_selector"] = {"disk": "ssd"}
    if draw(st.integers(0, 3)) == 0:
        kw["tolerations"] = (Toleration("dedicated", "Exists"),)
    made = pod(
        name,
        draw(st.sampled_from([100, 250, 500])),
        draw(st.sampled_from([128 * MI, 512 * MI])),
        namespace=draw(st.sampled_from(["ns1", "ns1", "ns2"])),
        labels=labels,
        owners=owner(draw(st.sampled_from(["rs1", "rs2", "rs3"]))),
        **kw,
    )
    if draw(st.integers(0, 6)) == 0:
        made = replace(made, deletion_time=1.0)  # terminating: spread does not count it
    return made


@st.composite
def topology_nodes(draw: Any, max_nodes: int = 7) -> list[NodeView]:
    out = []
    for i in range(draw(st.integers(1, max_nodes))):
        labels = {}
        zone = draw(st.sampled_from(["z1", "z2", "z3", None]))
        if zone is not None:
            labels[ZONE_LABEL] = zone
        if draw(st.integers(0, 2)) > 0:
            labels[REGION] = "r1" if zone in ("z1", "z2") else "r2"
        if draw(st.booleans()):
            labels["disk"] = "ssd"
        if i == 1 and draw(st.integers(0, 3)) == 0:
            labels[HOSTNAME_LABEL] = "n0"  # shares the first node's hostname: one domain, two nodes
        out.append(
            node(
                f"n{i}",
                draw(st.sampled_from([1000, 2000])),
                2 * GI,
                draw(st.integers(3, 6)),
                labels=labels,
                taints=(TAINT,) if draw(st.integers(0, 4)) == 0 else (),
            )
        )
    return out


def _bind_where_reference_fits(snap: ClusterSnapshot, p: Pod, i: int) -> None:
    if snap.active[i] and ref_fits(snap, p, i):
        snap.add_pod(p, i)


@st.composite
def worlds(draw: Any) -> ClusterSnapshot:
    """A snapshot whose index is built early and then told of a random series of changes."""
    snap = ClusterSnapshot(draw(topology_nodes()))
    for k in range(draw(st.integers(0, 8))):
        _bind_where_reference_fits(
            snap, draw(constrained_pods(f"p{k}")), draw(st.integers(0, snap.num_slots - 1))
        )
    snap.pod_index()
    counter = [0]

    def fresh(prefix: str) -> Pod:
        counter[0] += 1
        return draw(constrained_pods(f"{prefix}{counter[0]}"))

    ops: list[tuple[str, int]] = []
    snap.__dict__["_ops"] = ops  # reported with a failing example (hypothesis.note)
    for _ in range(draw(st.integers(0, 10))):
        op = draw(
            st.sampled_from(
                [
                    "bind",
                    "bind",
                    "fork",
                    "copy",
                    "revert",
                    "commit",
                    "take",
                    "remove-pod",
                    "remove-node",
                    "template",
                    "relabel",
                    "keep",
                ]
            )
        )
        n = snap.num_slots
        i = draw(st.integers(0, n - 1))
        ops.append((op, i))
        if op == "bind":
            _bind_where_reference_fits(snap, fresh("b"), i)
        elif op == "fork":
            snap.fork()
        elif op == "copy":
            snap.fork(copy=True)
        elif op == "revert" and snap.fork_depth:
            snap.revert()
        elif op == "commit" and snap.fork_depth:
            snap.commit()
        elif op == "take" and snap.active[i]:
            snap.take_pods(i)
        elif op == "remove-pod" and snap.pods_on(i):
            snap.remove_pod(snap.pods_on(i)[0], i)
        elif op == "remove-node" and snap.active[i] and not snap.pods_on(i) and snap.num_active() > 1:
            snap.remove_node(i)
        elif op == "template":
            zone = draw(st.sampled_from(["z1", "z2", "z4"]))
            template = node("tmpl", 2000, 2 * GI, 5, zone=zone)
            counter[0] += 1
            names = [f"tmpl-{counter[0]}-{k}" for k in range(draw(st.integers(1, 2)))]
            first = snap.add_template_nodes(template, names)
            _bind_where_reference_fits(snap, fresh("t"), first)
        elif op == "relabel" and snap.active[i]:
            view = snap.node(i)
            zone = draw(st.sampled_from(["z1", "z2", "z3"]))
            snap.replace_node(i, replace(view, labels={**view.labels, ZONE_LABEL: zone}))
        elif op == "keep" and not snap.fork_depth:
            keep = [k for k in range(n) if snap.active[k]]
            snap.keep_slots(keep)
    return snap


def _signature(c: ClassCounts) -> object:
    return (c.cls.namespace, tuple(sorted(c.cls.labels.items())), c.cls.terminating, c.cls.anti)


def _index_view(index: PodIndex, keys: list[str]) -> object:
    """What an index knows, by label values and pod signatures (codes are numbered in order of
    appearance, and classes of pods alike are counted together)."""
    snap = index.snap
    slots: dict[object, Counter[int]] = {}
    for c in index.classes:
        slots.setdefault(_signature(c), Counter()).update(c.slots)
    per_key = {}
    for name in keys:
        key = index.key(name)
        values = {code: value for value, code in key.values.items()}
        codes = [values.get(int(c)) for c in key.codes[: snap.num_slots]]
        nodes = {values[c]: int(n) for c, n in enumerate(key.nodes[: key.domains]) if n}
        holders = {values[c]: int(n) for c, n in enumerate(key.holders[: key.domains]) if n}
        counts: dict[object, Counter[str]] = {}
        for c in index.classes:
            per_domain = index.domain_counts([c], name)
            counts.setdefault(_signature(c), Counter()).update(
                {values[d]: int(n) for d, n in enumerate(per_domain) if n}
            )
        per_key[name] = (codes, nodes, holders, key.shared, key.unlabelled, _nonzero(counts))
    return _nonzero(slots), per_key


def _nonzero(counts: dict[object, Counter[Any]]) -> dict[object, dict[Any, int]]:
    return {k: {d: n for d, n in c.items() if n} for k, c in counts.items() if any(c.values())}


@SETTINGS
@given(worlds())
def test_the_index_kept_in_step_is_the_index_built_afresh(snap: ClusterSnapshot) -> None:
    note(f"operations: {snap.__dict__['_ops']}")
    note(
        f"pods: {[[(p.name, p.namespace, p.labels, p.deletion_time) for p in snap.pods_on(i)] for i in range(snap.num_slots)]}"
    )
    kept = snap.pod_index()
    assert _index_view(kept, KEYS) == _index_view(PodIndex(snap), KEYS)


@SETTINGS
@given(worlds(), st.data())
def test_filters_agree_with_the_reference(snap: ClusterSnapshot, data: Any) -> None:
    incoming = data.draw(constrained_pods("incoming"))
    checker = FitChecker(snap)
    facts = checker.facts(incoming)
    slots = np.arange(snap.num_slots)
    expected = [ref_failure(snap, incoming, i) if snap.active[i] else None for i in range(snap.num_slots)]
    active = snap.active.tolist()
    got = checker.diagnose(facts, slots)
    assert [g for g, a in zip(got, active, strict=True) if a] == [
        e for e, a in zip(expected, active, strict=True) if a
    ]
    fits = [a and e is None for a, e in zip(active, expected, strict=True)]
    assert checker.feasible(facts).tolist() == fits
    start = data.draw(st.integers(0, snap.num_slots))
    assert checker.feasible_from(facts, start).tolist() == fits[start:]
    assert [checker.fits(facts, i) for i in range(snap.num_slots)] == fits


@SETTINGS
@given(worlds(), st.data())
def test_a_filter_the_pod_decides_applies_whatever_is_bound(snap: ClusterSnapshot, data: Any) -> None:
    # FitChecker.rules asks such a filter once per template, not per pod placed.
    incoming = data.draw(constrained_pods("incoming"))
    for f in DOMAIN_FILTERS:
        if f.pod_decides:
            assert f.applies(incoming, snap) == f.may_apply(incoming)
            assert f.applies(incoming, ClusterSnapshot()) == f.may_apply(incoming)


@SETTINGS
@given(worlds(), st.data())
def test_estimates_agree_with_the_reference(snap: ClusterSnapshot, data: Any) -> None:
    template = node("tmpl", 2000, 2 * GI, 6, zone=data.draw(st.sampled_from(["z1", "z2", None])))
    pending = [data.draw(constrained_pods(f"q{k}")) for k in range(data.draw(st.integers(1, 10)))]
    result = estimate(snap, template, pending)
    count, scheduled = ref_estimate(snap, template, pending)
    assert result.node_count == count
    assert sorted(p.name for p in result.scheduled) == sorted(p.name for p in scheduled)


@SETTINGS
@given(worlds(), st.data())
def test_removals_agree_with_the_reference(snap: ClusterSnapshot, data: Any) -> None:
    names = [snap.name(i) for i in range(snap.num_slots) if snap.active[i]]
    candidates = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    assert list(simulate_removals(snap, candidates).removable) == ref_remove(snap, candidates, must_move)


@SETTINGS
@given(worlds(), st.data())
def test_the_filter_of_schedulable_pods_agrees_with_the_reference(snap: ClusterSnapshot, data: Any) -> None:
    pending = [
        replace(data.draw(constrained_pods(f"h{k}")), priority=data.draw(st.integers(0, 1)))
        for k in range(data.draw(st.integers(1, 10)))
    ]
    simulator = HintingSimulator()
    # A first call leaves hints (where each pod went); the second, on a changed cluster, tries them first.
    snap.fork()
    first = simulator.try_schedule(snap, pending)
    snap.revert()
    hints = {**simulator._old, **simulator._current}
    snap.fork()
    expected, _ = ref_hinting(snap, pending, {})
    snap.revert()
    assert [p.name for p in first] == [p.name for p in expected]
    if snap.num_active() > 1:
        i = data.draw(st.sampled_from(snap.active_indices().tolist()))
        if snap.pods_on(i):
            snap.take_pods(i)
    snap.fork()
    expected, _ = ref_hinting(snap, pending, hints)
    snap.revert()
    assert [p.name for p in simulator.try_schedule(snap, pending)] == [p.name for p in expected]


def test_the_index_follows_a_pod_bound_then_the_fork_reverted() -> None:
    # The simplest case spelled out: one anti-affine pod bound inside a fork and reverted.
    a = pod(
        "a",
        labels={"app": "a"},
        anti=(PodAffinityTerm(LabelSelector((Requirement("app", "In", ("a",)),)), HOSTNAME_LABEL),),
    )
    snap = ClusterSnapshot([node("n0", zone="z1"), node("n1", zone="z2")])
    index = snap.pod_index()
    snap.fork()
    snap.add_pod(a, 0)
    assert [dict(c.slots) for c in index.classes] == [{0: 1}]
    checker = FitChecker(snap)
    other = replace(a, name="b")
    assert checker.feasible(checker.facts(other)).tolist() == [False, True]
    snap.revert()
    assert [dict(c.slots) for c in index.classes] == [{}]
    assert FitChecker(snap).feasible(FitChecker(snap).facts(other)).tolist() == [True, True]
