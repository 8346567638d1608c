"""Eligibility answers kept from loop to loop are the answers of every rule run afresh, whatever
changed in between: a node's view (annotations, readiness, taints), its pods (a pod being deleted
included), its group and the group's options, the GPU label, the recheck TTLs and the time."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ca_builders import cnode
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubetide.cloud.instance import NodeGroupAutoscalingOptions
from kubetide.cluster.scaledown.eligibility import (
    SCALE_DOWN_DISABLED_ANNOTATION,
    EligibilityInput,
    EligibilityMemo,
    filter_out_unremovable,
)
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.utilization import UtilizationMemo

_NAMES = ("a", "b", "c")
_VIEWS = {
    name: (
        cnode(name, cpu=1000),
        cnode(name, cpu=4000),
        cnode(name, ready=False),
        cnode(name, annotations={SCALE_DOWN_DISABLED_ANNOTATION: "true"}),
        cnode(name, taints=(Taint(TO_BE_DELETED_TAINT, "950", "NoSchedule"),)),
        # A GPU node while the cloud's GPU label is "x"; its GPUs are unused.
        replace(cnode(name, cpu=1000), labels={"kubernetes.io/hostname": name, "x": "a100"}),
    )
    for name in _NAMES
}


def _pod(name: str, cpu: int, node: str, *, daemonset: bool = False, deleted: float | None = None) -> Pod:
    kind = "DaemonSet" if daemonset else "ReplicaSet"
    return Pod(
        name,
        owners=(OwnerRef(kind, "owner", f"uid-{kind}", True),),
        containers=(Container("c", Resources({"cpu": cpu, "memory": 0})),),
        node_name=node,
        deletion_time=deleted,
    )


_PODS = {
    name: (
        _pod(f"{name}-small", 200, name),
        _pod(f"{name}-big", 700, name),
        _pod(f"{name}-ds", 300, name, daemonset=True),
        _pod(f"{name}-leaving", 200, name, deleted=900.0),  # long terminating from 960 s on
    )
    for name in _NAMES
}
_OPTIONS = (
    NodeGroupAutoscalingOptions(0.5, 0.5, 600.0, 1200.0, 900.0),
    NodeGroupAutoscalingOptions(0.9, 0.5, 600.0, 1200.0, 900.0),
    NodeGroupAutoscalingOptions(0.5, 0.5, 600.0, 1200.0, 900.0, ignore_daemon_sets_utilization=True),
)


@st.composite
def _loop(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "views": {n: draw(st.integers(0, 5)) for n in _NAMES},
        "pods": {n: tuple(draw(st.lists(st.integers(0, 3), unique=True, max_size=4))) for n in _NAMES},
        "groups": {n: draw(st.sampled_from(["g1", "g2", None])) for n in _NAMES},
        "options": {g: draw(st.integers(0, 2)) for g in ("g1", "g2")},
        "gpu_label": draw(st.sampled_from(["", "x"])),
        "recheck": {n: draw(st.sampled_from([None, 950.0, 2000.0])) for n in _NAMES},
        "now": draw(st.sampled_from([930.0, 1000.0])),
        "unready_enabled": draw(st.booleans()),
    }


def _input(
    loop: dict[str, Any], versions: dict[tuple[str, tuple[int, ...]], int], **memos: Any
) -> EligibilityInput:
    pods = {n: [_PODS[n][k] for k in loop["pods"][n]] for n in _NAMES}
    return EligibilityInput(
        pods_by_node=pods,
        group_of=loop["groups"],
        group_options=lambda g: _OPTIONS[loop["options"][g]],
        scale_down_unready_enabled=loop["unready_enabled"],
        gpu_label=loop["gpu_label"],
        recently_unremovable={n: t for n, t in loop["recheck"].items() if t is not None},
        pods_versions={n: versions.setdefault((n, loop["pods"][n]), len(versions)) for n in _NAMES},
        **memos,
    )


@st.composite
def _loops(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Loops each like the last one but for one thing (or nothing), or new."""
    out = [draw(_loop())]
    for _ in range(draw(st.integers(0, 8))):
        last, other = out[-1], draw(_loop())
        change = draw(st.sampled_from([None, "new", *other]))
        if change is None:
            out.append(last)
        elif change == "new":
            out.append(other)
        else:
            out.append({**last, change: other[change]})
    return out


_STEADY = {
    "views": dict.fromkeys(_NAMES, 0),
    "pods": dict.fromkeys(_NAMES, (1,)),  # 70 % used
    "groups": dict.fromkeys(_NAMES, "g1"),
    "options": {"g1": 0, "g2": 0},
    "gpu_label": "",
    "recheck": dict.fromkeys(_NAMES),
    "now": 1000.0,
    "unready_enabled": True,
}


@settings(max_examples=400, deadline=None)
@given(_loops())
# The group's threshold rises above the nodes' utilization; a node leaves the autoscaled groups.
@example([_STEADY, {**_STEADY, "options": {"g1": 1, "g2": 0}}])
@example([_STEADY, {**_STEADY, "groups": {**_STEADY["groups"], "a": None}}])
# The cloud's GPU label appears: the labelled nodes become GPU nodes.
@example(
    [
        {**_STEADY, "views": dict.fromkeys(_NAMES, 5)},
        {**_STEADY, "views": dict.fromkeys(_NAMES, 5), "gpu_label": "x"},
    ]
)
def test_kept_answers_are_the_answers_of_every_rule(loops: list[dict[str, Any]]) -> None:
    kept, util = EligibilityMemo(), UtilizationMemo()
    versions: dict[tuple[str, tuple[int, ...]], int] = {}  # one version per node's pods, as a snapshot
    for loop in loops:
        nodes = [_VIEWS[n][loop["views"][n]] for n in _NAMES]
        with_memo = filter_out_unremovable(nodes, _input(loop, versions, kept=kept, memo=util), loop["now"])
        fresh = filter_out_unremovable(
            nodes, replace(_input(loop, versions), pods_versions=None), loop["now"]
        )
        assert with_memo.candidates == fresh.candidates
        assert with_memo.unremovable == fresh.unremovable
        assert repr(with_memo.utilization) == repr(fresh.utilization)
