"""A pod's drain verdict keeps what only the pod and the options decide; it must always be the verdict
of running every rule in upstream's order, whatever the time, controllers, PDBs and options."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubetide.model.pod import OwnerRef, Pod
from kubetide.scheduling.drainability import (
    PDB,
    SAFE_TO_EVICT,
    SAFE_TO_EVICT_LOCAL_VOLUMES,
    DrainContext,
    DrainMemo,
    DrainOptions,
    drain_node,
    pod_verdict,
    verdict_by_rules,
)

from .builders import selector

_OWNERS = [
    (),
    (OwnerRef("ReplicaSet", "web", "uid-rs", True),),
    (OwnerRef("DaemonSet", "agent", "uid-ds", True),),
    (OwnerRef("StatefulSet", "db", "uid-ss", True),),
    (OwnerRef("Job", "batch", "uid-job", True),),
    (OwnerRef("Widget", "custom", "uid-w", True),),
]
_ANNOTATIONS = [
    {},
    {SAFE_TO_EVICT: "true"},
    {SAFE_TO_EVICT: "false"},
    {SAFE_TO_EVICT: "on-completion"},
    {"kubernetes.io/config.mirror": "x"},
    {"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"},
    {SAFE_TO_EVICT_LOCAL_VOLUMES: "scratch"},
]
_VOLUMES = [(), ({"name": "scratch", "emptyDir": {}},), ({"name": "logs", "hostPath": {"path": "/x"}},)]


@st.composite
def _pods(draw: st.DrawFn) -> Pod:
    return Pod(
        "p",
        # Ordinary values come often: what a plain pod's kept answer is tested on.
        namespace=draw(st.sampled_from(["default", "kube-system"])),
        labels=draw(st.sampled_from([{}, {"app": "web"}])),
        annotations=dict(draw(st.sampled_from([{}, {}, {}, *_ANNOTATIONS]))),
        owners=draw(st.sampled_from([_OWNERS[1], _OWNERS[1], *_OWNERS])),
        volumes=draw(st.sampled_from(_VOLUMES)),
        phase=draw(st.sampled_from(["Running", "Running", "Succeeded", "Failed", "Pending"])),
        restart_policy=draw(st.sampled_from(["Always", "OnFailure", "Never"])),
        deletion_time=draw(st.sampled_from([None, None, None, 0.0, 500.0])),
        creation_time=draw(st.sampled_from([None, 0.0, 3000.0])),
    )


_OPTIONS = [
    DrainOptions(),
    DrainOptions(
        skip_nodes_with_system_pods=False,
        skip_nodes_with_local_storage=False,
        skip_nodes_with_custom_controller_pods=False,
        min_replica_count=2,
    ),
    DrainOptions(skip_nodes_with_local_storage=False, min_replica_count=1),
]


@st.composite
def _contexts(draw: st.DrawFn) -> DrainContext:
    # Few distinct options, so the same options often meet other times, controllers and PDBs.
    options = draw(st.sampled_from(_OPTIONS))
    pdbs = draw(
        st.lists(
            st.builds(
                PDB,
                st.sampled_from(["default", "kube-system"]),
                st.sampled_from([selector(), selector(app="web")]),
                st.integers(0, 1),
            ),
            max_size=2,
        )
    )
    known = st.sampled_from(
        [("ReplicaSet", ns, "web") for ns in ("default", "kube-system")]
        + [("StatefulSet", "default", "db"), ("Job", "default", "batch"), ("DaemonSet", "default", "agent")]
    )
    controllers = draw(st.none() | st.dictionaries(known, st.integers(0, 3)))
    return DrainContext(draw(st.sampled_from([100.0, 5000.0])), options, pdbs, controllers)


_SYSTEM_POD = Pod("dns", namespace="kube-system", owners=_OWNERS[1], phase="Running")


@settings(max_examples=500)
@given(_pods(), st.lists(_contexts(), min_size=1, max_size=6))
# A kube-system pod a PDB covers one loop and not the next: the system rule is not the pod's alone.
@example(_SYSTEM_POD, [DrainContext(100.0, pdbs=[PDB("kube-system", selector(), 1)]), DrainContext(100.0)])
def test_kept_answers_give_the_verdict_of_every_rule_in_order(pod: Pod, contexts: list[DrainContext]) -> None:
    for ctx in contexts:  # the same pod judged again, as the next loops do, maybe with other options
        assert pod_verdict(pod, ctx) == verdict_by_rules(pod, ctx)


@st.composite
def _loops(draw: st.DrawFn) -> list[DrainContext]:
    """Contexts of consecutive loops: each the last one with one thing changed (or none), or new."""
    out = [draw(_contexts())]
    for _ in range(draw(st.integers(0, 6))):
        last, other = out[-1], draw(_contexts())
        change = draw(st.sampled_from(["same", "time", "pdbs", "controllers", "options", "new"]))
        out.append(
            {
                "same": last,
                "time": replace(last, now=other.now),
                "pdbs": replace(last, pdbs=other.pdbs),
                "controllers": replace(last, controllers=other.controllers),
                "options": replace(last, options=other.options),
                "new": other,
            }[change]
        )
    return out


# Ordinary pods come often: a replicated web pod (PDBs and controllers decide) and an old kube-system
# pod (the time decides).
_ORDINARY = (
    Pod("web-0", labels={"app": "web"}, owners=_OWNERS[1], phase="Running"),
    Pod("dns-0", namespace="kube-system", owners=_OWNERS[1], phase="Running", creation_time=0.0),
)


@settings(max_examples=500)
@given(
    st.lists(st.sampled_from(_ORDINARY) | _pods(), min_size=1, max_size=5),
    _loops(),
    st.lists(st.integers(0, 4), max_size=4),
)
def test_kept_node_answers_are_drain_node_s(
    pods: list[Pod], loops: list[DrainContext], picks: list[int]
) -> None:
    """Loop after loop, with the same pod objects on a node, and contexts that stay or change."""
    memo = DrainMemo()
    for ctx in loops:
        drain = memo.drainer(ctx)
        for node in ([pods[k % len(pods)] for k in picks], pods, pods[::-1]):
            assert drain(node) == drain_node(node, ctx)


def test_a_node_s_answer_is_kept_only_while_the_controllers_are_the_same() -> None:
    web = Pod("web-1", owners=_OWNERS[1], phase="Running")
    memo = DrainMemo()
    ctx = DrainContext(100.0, DrainOptions(min_replica_count=2), (), {("ReplicaSet", "default", "web"): 3})
    assert memo.drainer(ctx)([web]).drainable
    shrunk = DrainContext(200.0, ctx.options, (), {("ReplicaSet", "default", "web"): 1})
    assert not memo.drainer(shrunk)([web]).drainable
