"""Each filter gives kube-scheduler's answer and reason text."""

from __future__ import annotations

import numpy as np

from kubetide.model.node import HOSTNAME_LABEL, ZONE_LABEL
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import NodeSelectorTerm, PodAffinityTerm, Taint, Toleration
from kubetide.model.selectors import Requirement
from kubetide.scheduling.fit import FitChecker
from kubetide.scheduling.snapshot import ClusterSnapshot

from .builders import GI, MI, node, pod, selector, spread, term


def reasons(snap: ClusterSnapshot, p: Pod) -> list[tuple[str, ...]]:
    """Reasons per node (empty tuple: the pod fits), checking the fast mask agrees."""
    checker = FitChecker(snap)
    facts = checker.facts(p)
    failures = checker.diagnose(facts, np.arange(snap.num_slots))
    assert checker.feasible(facts).tolist() == [f is None for f in failures]
    return [() if f is None else f.reasons for f in failures]


# ---------------------------------------------------------------- resources
def test_insufficient_resources_lists_every_short_resource() -> None:
    s = ClusterSnapshot([node("n0", cpu=1000, mem=1 * GI, extra={"nvidia.com/gpu": 1})])
    assert reasons(s, pod("p", cpu=2000, mem=2 * GI, extra={"nvidia.com/gpu": 2})) == [
        ("Insufficient cpu", "Insufficient memory", "Insufficient nvidia.com/gpu")
    ]
    assert reasons(s, pod("p", cpu=1000, mem=1 * GI)) == [()]


def test_too_many_pods_even_without_requests() -> None:
    s = ClusterSnapshot([node("n0", pods=1)], [pod("a", cpu=0, mem=0, node_name="n0")])
    assert reasons(s, pod("p", cpu=0, mem=0)) == [("Too many pods",)]


def test_zero_request_fits_an_overcommitted_node() -> None:
    s = ClusterSnapshot([node("n0", cpu=100)], [pod("a", cpu=500, node_name="n0")])
    assert reasons(s, pod("p", cpu=0, mem=0)) == [()]
    assert reasons(s, pod("p", cpu=1, mem=0)) == [("Insufficient cpu",)]


def test_effective_request_uses_init_containers_sidecars_and_overhead() -> None:
    s = ClusterSnapshot([node("n0", cpu=1000)])
    init_heavy = Pod(
        "i",
        containers=(Container("app", Resources({"cpu": 200})),),
        init_containers=(Container("init", Resources({"cpu": 1100})),),
    )
    assert reasons(s, init_heavy) == [("Insufficient cpu",)]
    sidecar = Pod(
        "s",
        containers=(Container("app", Resources({"cpu": 600})),),
        init_containers=(Container("proxy", Resources({"cpu": 300}), restartable=True),),
        overhead=Resources({"cpu": 100}),
    )
    assert sidecar.requests["cpu"] == 1000
    assert reasons(s, sidecar) == [()]
    sidecar_plus = Pod(
        "s2",
        containers=(Container("app", Resources({"cpu": 601})),),
        init_containers=(Container("proxy", Resources({"cpu": 300}), restartable=True),),
        overhead=Resources({"cpu": 100}),
    )
    assert reasons(s, sidecar_plus) == [("Insufficient cpu",)]


def test_ephemeral_storage() -> None:
    s = ClusterSnapshot([node("n0", extra={"ephemeral-storage": 10 * GI})])
    assert reasons(s, pod("p", extra={"ephemeral-storage": 11 * GI})) == [("Insufficient ephemeral-storage",)]


# ---------------------------------------------------------------- node selection
AFFINITY = ("node(s) didn't match Pod's node affinity/selector",)


def test_node_selector() -> None:
    s = ClusterSnapshot([node("a", labels={"disk": "ssd"}), node("b")])
    assert reasons(s, pod("p", node_selector={"disk": "ssd"})) == [(), AFFINITY]


def test_required_node_affinity_operators() -> None:
    s = ClusterSnapshot([node("a", labels={"tier": "5", "gpu": "yes"}), node("b", labels={"tier": "1"})])
    cases = {
        term("gpu", "In", "yes"): [(), AFFINITY],
        term("gpu", "NotIn", "yes"): [AFFINITY, ()],
        term("gpu", "Exists"): [(), AFFINITY],
        term("gpu", "DoesNotExist"): [AFFINITY, ()],
        term("tier", "Gt", "3"): [(), AFFINITY],
        term("tier", "Lt", "3"): [AFFINITY, ()],
    }
    for t, expected in cases.items():
        assert reasons(s, pod("p", affinity=(t,))) == expected, t
    # Terms are ORed; requirements within a term are ANDed.
    assert reasons(s, pod("p", affinity=(term("gpu", "Exists"), term("tier", "In", "1")))) == [(), ()]


def test_match_fields_on_node_name() -> None:
    s = ClusterSnapshot([node("a"), node("b")])
    t = NodeSelectorTerm(match_fields=(Requirement("metadata.name", "In", ("b",)),))
    assert reasons(s, pod("p", affinity=(t,))) == [AFFINITY, ()]


def test_hostname_selector_is_evaluated_per_node() -> None:
    s = ClusterSnapshot([node("a"), node("b")])
    assert reasons(s, pod("p", node_selector={HOSTNAME_LABEL: "a"})) == [(), AFFINITY]


# ---------------------------------------------------------------- taints
def test_taints_and_tolerations() -> None:
    batch = Taint("dedicated", "batch", "NoSchedule")
    s = ClusterSnapshot(
        [
            node("ns", taints=(batch,)),
            node("ne", taints=(Taint("maint", "", "NoExecute"),)),
            node("pref", taints=(Taint("soft", "x", "PreferNoSchedule"),)),
        ]
    )
    assert reasons(s, pod("p")) == [
        ("node(s) had untolerated taint {dedicated: batch}",),
        ("node(s) had untolerated taint {maint: }",),
        (),
    ]
    tolerate_all = (Toleration("dedicated", "Equal", "batch", "NoSchedule"), Toleration("maint", "Exists"))
    assert reasons(s, pod("p", tolerations=tolerate_all)) == [(), (), ()]
    wrong_value = (Toleration("dedicated", "Equal", "web", "NoSchedule"),)
    assert reasons(s, pod("p", tolerations=wrong_value))[0] == (
        "node(s) had untolerated taint {dedicated: batch}",
    )
    wrong_effect = (Toleration("dedicated", "Exists", "", "NoExecute"),)
    assert reasons(s, pod("p", tolerations=wrong_effect))[0] != ()


def test_unschedulable_node() -> None:
    s = ClusterSnapshot([node("cordoned", unschedulable=True)])
    assert reasons(s, pod("p")) == [("node(s) were unschedulable",)]
    tol = (Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),)
    assert reasons(s, pod("p", tolerations=tol)) == [()]


def test_static_filters_report_the_first_failure_only() -> None:
    s = ClusterSnapshot([node("a", cpu=10, unschedulable=True, taints=(Taint("k", "v", "NoSchedule"),))])
    assert reasons(s, pod("p", node_selector={"x": "y"})) == [("node(s) were unschedulable",)]


# ---------------------------------------------------------------- host ports
def test_host_ports() -> None:
    s = ClusterSnapshot([node("a"), node("b")], [pod("web", ports=(8080,), node_name="a")])
    assert reasons(s, pod("p", ports=(8080,))) == [
        ("node(s) didn't have free ports for the requested pod ports",),
        (),
    ]
    assert reasons(s, pod("p", ports=(9090,))) == [(), ()]


# ---------------------------------------------------------------- inter-pod
def anti(key: str, **labels: str) -> PodAffinityTerm:
    return PodAffinityTerm(selector(**labels), key)


def test_anti_affinity_on_hostname_and_zone() -> None:
    nodes = [node("a", zone="z1"), node("b", zone="z1"), node("c", zone="z2")]
    s = ClusterSnapshot(nodes, [pod("db-0", labels={"app": "db"}, node_name="a")])
    host = pod("db-1", labels={"app": "db"}, anti=(anti(HOSTNAME_LABEL, app="db"),))
    zone = pod("db-1", labels={"app": "db"}, anti=(anti(ZONE_LABEL, app="db"),))
    msg = ("node(s) didn't match pod anti-affinity rules",)
    assert reasons(s, host) == [msg, (), ()]
    assert reasons(s, zone) == [msg, msg, ()]


def test_existing_pods_anti_affinity_is_symmetric() -> None:
    guard = pod("guard", labels={"app": "guard"}, anti=(anti(ZONE_LABEL, app="web"),), node_name="a")
    s = ClusterSnapshot([node("a", zone="z1"), node("b", zone="z1"), node("c", zone="z2")], [guard])
    msg = ("node(s) didn't satisfy existing pods anti-affinity rules",)
    assert reasons(s, pod("w", labels={"app": "web"})) == [msg, msg, ()]
    assert reasons(s, pod("x", labels={"app": "other"})) == [(), (), ()]


def test_pod_affinity_and_the_first_pod_exception() -> None:
    s = ClusterSnapshot([node("a", zone="z1"), node("b", zone="z2"), node("nolabel")])
    follower = pod("f", labels={"app": "web"}, affine=(anti(ZONE_LABEL, app="cache"),))
    msg = ("node(s) didn't match pod affinity rules",)
    assert reasons(s, follower) == [msg, msg, msg]  # no cache pod anywhere, and f is not a cache pod
    first = pod("c0", labels={"app": "cache"}, affine=(anti(ZONE_LABEL, app="cache"),))
    assert reasons(s, first) == [(), (), msg]  # matches its own term: any node with the key
    s.add_pod(pod("c1", labels={"app": "cache"}), 1)
    assert reasons(s, follower) == [msg, (), msg]


def test_pod_affinity_namespaces() -> None:
    s = ClusterSnapshot(
        [node("a", zone="z1")], [pod("c", labels={"app": "cache"}, namespace="other", node_name="a")]
    )
    same_ns = pod("f", affine=(anti(ZONE_LABEL, app="cache"),))
    other_ns = pod("f", affine=(PodAffinityTerm(selector(app="cache"), ZONE_LABEL, ("other",)),))
    assert reasons(s, same_ns) == [("node(s) didn't match pod affinity rules",)]
    assert reasons(s, other_ns) == [()]


# ---------------------------------------------------------------- topology spread
def test_topology_spread_max_skew_and_missing_label() -> None:
    nodes = [node("a", zone="z1"), node("b", zone="z2"), node("nolabel")]
    s = ClusterSnapshot(nodes, [pod("w0", labels={"app": "w"}, node_name="a")])
    p = pod("w1", labels={"app": "w"}, spread=(spread(ZONE_LABEL, 1, app="w"),))
    assert reasons(s, p) == [
        ("node(s) didn't match pod topology spread constraints",),
        (),
        ("node(s) didn't match pod topology spread constraints (missing required label)",),
    ]


def test_topology_spread_min_domains_treats_minimum_as_zero() -> None:
    s = ClusterSnapshot([node("a", zone="z1"), node("b", zone="z2")])
    s.add_pod(pod("w0", labels={"app": "w"}), 0)
    s.add_pod(pod("w1", labels={"app": "w"}), 1)
    relaxed = pod("w", labels={"app": "w"}, spread=(spread(ZONE_LABEL, 1, app="w"),))
    strict = pod("w", labels={"app": "w"}, spread=(spread(ZONE_LABEL, 1, 3, app="w"),))
    assert reasons(s, relaxed) == [(), ()]
    assert reasons(s, strict) == [("node(s) didn't match pod topology spread constraints",)] * 2


def test_memory_quantities_are_bytes() -> None:
    s = ClusterSnapshot([node("a", mem=100 * MI)])
    assert reasons(s, pod("p", mem=100 * MI)) == [()]
    assert reasons(s, pod("p", mem=100 * MI + 1)) == [("Insufficient memory",)]
