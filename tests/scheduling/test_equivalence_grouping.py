"""``group_pods`` derives a key once per set of pods sharing their template's objects; the groups must
be exactly those of the plain rule: pods are together iff their signatures (computed pod by pod) are
equal, groups in order of their first pod, pods in their given order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Toleration
from kubetide.scheduling.equivalence import (
    _group_few,
    _group_many,
    _signature,
    equivalence_key,
    group_pods,
)

_OWNERS = [
    (),
    (OwnerRef("ReplicaSet", "a", "uid-a", True),),
    (OwnerRef("ReplicaSet", "b", "uid-b", True),),
    (OwnerRef("DaemonSet", "ds", "uid-ds", True),),
    (OwnerRef("ReplicaSet", "a", "uid-a", False),),  # an owner that is not the controller
]
_CONTAINERS = [(Container("app", Resources({"cpu": cpu, "memory": 100})),) for cpu in (100, 200)]
_TOLERATIONS = [(), (Toleration(key="k", operator="Exists"),)]


@st.composite
def _pods(draw: st.DrawFn) -> list[Pod]:
    """Pods from a few templates; each field is either the template's object or an equal copy."""
    count = draw(st.integers(0, 40))
    pods = []
    for i in range(count):
        owners = draw(st.sampled_from(_OWNERS))
        containers = draw(st.sampled_from(_CONTAINERS))
        if draw(st.booleans()):  # an equal but distinct object, as an informer decodes it
            containers = tuple(Container(c.name, Resources(dict(c.requests))) for c in containers)
        if draw(st.booleans()):
            owners = tuple(OwnerRef(o.kind, o.name, o.uid, o.controller) for o in owners)
        labels = draw(st.sampled_from([{}, {"app": "x"}, {"app": "y"}, {"app": "x", "tier": "web"}]))
        labels = dict(reversed(labels.items())) if draw(st.booleans()) else dict(labels)
        pods.append(
            Pod(
                f"p{i}",
                namespace=draw(st.sampled_from(["default", "other"])),
                owners=owners,
                labels=labels,
                containers=containers,
                node_selector=dict(draw(st.sampled_from([{}, {"disk": "ssd"}]))),
                tolerations=draw(st.sampled_from(_TOLERATIONS)),
                priority=draw(st.sampled_from([0, 10])),
            )
        )
    return pods


def _plain(pods: list[Pod]) -> list[list[str]]:
    groups: dict[tuple[object, ...], list[str]] = {}
    for p in pods:
        groups.setdefault(_signature(p), []).append(p.name)
    return list(groups.values())


@settings(max_examples=300)
@given(_pods())
def test_groups_match_per_pod_signatures(pods: list[Pod]) -> None:
    expected = _plain(pods)
    assert [[p.name for p in g.pods] for g in group_pods(pods)] == expected
    # the keys cached on the pods give the same groups the next time
    assert [[p.name for p in g.pods] for g in group_pods(pods)] == expected
    # a node's few pods and the many of a cluster are grouped two ways: both give these groups
    keys = [equivalence_key(p) for p in pods]
    for way in (_group_few, _group_many):
        assert [[p.name for p in g.pods] for g in way(pods, keys)] == expected


def test_pods_without_controller_sharing_every_object_stay_apart() -> None:
    containers = _CONTAINERS[0]
    pods = [Pod(f"bare-{i}", containers=containers) for i in range(3)]
    assert [len(g.pods) for g in group_pods(pods)] == [1, 1, 1]
