"""Scale-down cases: ``scale_down_eligibility``, ``scale_down_min_size`` and ``scale_down_budget``."""

from __future__ import annotations

from typing import Any

import pytest
from ca_builders import cnode
from ca_cases import case_version, cases

from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.budgets import Budget, crop_nodes, group_nodes
from kubetide.cluster.scaledown.cooldown import ScaleDownTimes, scale_down_in_cooldown
from kubetide.cluster.scaledown.eligibility import EligibilityInput, filter_out_unremovable
from kubetide.cluster.scaledown.unneeded import GroupSizes, UnneededNode, removable_at, update_unneeded
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint

NOW = 1_700_000_000.0


def _pod(spec: dict[str, Any]) -> Pod:
    kind = "DaemonSet" if spec.get("daemonset") else "ReplicaSet"
    return Pod(
        spec["name"],
        owners=(OwnerRef(kind, "owner", f"uid-{kind}", True),),
        containers=(
            Container("c", Resources({"cpu": spec.get("cpu_m", 0), "memory": spec.get("mem_bytes", 0)})),
        ),
        node_name=spec["node"],
    )


@pytest.mark.parametrize("case", cases("scale_down_eligibility"))
def test_eligibility(case: dict[str, Any]) -> None:
    inp, want = case["input"], case["expected"]
    o = inp["options"]
    options = AutoscalingOptions(
        ca_compatibility_version=case_version(case),
        scale_down_utilization_threshold=o["scale_down_utilization_threshold"],
        scale_down_unready_enabled=o["scale_down_unready_enabled"],
        ignore_daemonsets_utilization=o["ignore_daemonsets_utilization"],
    )
    nodes = []
    for n in inp["nodes"]:
        taints = ()
        if "taint" in n:  # "ToBeDeletedByClusterAutoscaler=<now-30s unix>"
            taints = (Taint("ToBeDeletedByClusterAutoscaler", str(int(NOW - 30)), "NoSchedule"),)
        nodes.append(
            cnode(
                n["name"],
                ready=n.get("ready", True),
                cpu=n["cpu_m"],
                mem=n["mem_bytes"],
                taints=taints,
                annotations=n.get("annotations"),
            )
        )
    pods = [_pod(p) for p in inp["pods"]]
    defaults = options.node_group_defaults()
    result = filter_out_unremovable(
        nodes,
        EligibilityInput(
            pods_by_node={n.name: [p for p in pods if p.node_name == n.name] for n in nodes},
            group_of=dict.fromkeys((n.name for n in nodes), "ng1"),
            group_options=lambda group: defaults,
            scale_down_unready_enabled=options.scale_down_unready_enabled,
            compat=options.compat,
        ),
        NOW,
    )
    assert list(result.candidates) == want["unneeded"]
    assert result.unremovable == want["unremovable"]
    if "utilization" in want:
        (only,) = [u for name, u in result.utilization.items() if name in ("regular",)]
        assert only.utilization == pytest.approx(want["utilization"])


@pytest.mark.parametrize("case", cases("scale_down_min_size"))
def test_removable_at_min_size(case: dict[str, Any]) -> None:
    inp, want = case["input"], case["expected"]
    defaults = AutoscalingOptions().node_group_defaults()
    long_ago = NOW - 10 * defaults.scale_down_unready_time  # unneeded longer than either threshold
    unneeded = [UnneededNode(cnode(f"e{i}"), long_ago, True) for i in range(inp["empty_unneeded"])]
    unneeded += [UnneededNode(cnode(f"d{i}"), long_ago, False) for i in range(inp["drain_unneeded"])]
    result = removable_at(
        unneeded,
        NOW,
        group_of=lambda node: "ng1",
        group_options=lambda group: defaults,
        sizes={"ng1": GroupSizes(inp["target_size"], inp["min_size"], inp["deletions_in_progress"])},
    )
    assert (len(result.empty), len(result.drain)) == (want["removable_empty"], want["removable_drain"])
    assert set(result.unremovable.values()) <= {"NodeGroupMinSizeReached"}


@pytest.mark.parametrize("case", cases("scale_down_budget"))
def test_crop_nodes(case: dict[str, Any]) -> None:
    inp, want = case["input"], case["expected"]
    atomic = frozenset(inp["atomic_groups"])

    def groups(per_group: dict[str, int], prefix: str) -> list[Any]:
        return group_nodes([(f"{prefix}-{g}-{i}", g) for g, n in per_group.items() for i in range(n)], atomic)

    empty, drain = crop_nodes(
        groups(inp["empty_candidates_per_group"], "e"),
        groups(inp["drain_candidates_per_group"], "d"),
        Budget(
            inp["max_scale_down_parallelism"],
            inp["max_drain_parallelism"],
            inp["empty_in_progress"],
            inp["drain_in_progress"],
        ),
    )
    assert {g.group: len(g.nodes) for g in empty} == want["empty_to_delete_per_group"]
    assert {g.group: len(g.nodes) for g in drain} == want["drain_to_delete_per_group"]


def test_atomic_group_may_overflow_once() -> None:
    # Not a conformance case: the documented overflow rule for ZeroOrMax groups (budgets.go, CropNodes).
    empty, drain = crop_nodes(
        group_nodes([(f"a{i}", "slice") for i in range(12)], frozenset({"slice"})),
        group_nodes([("d1", "ng")]),
        Budget(10, 1),
        {"slice": 12},
    )
    assert [len(g.nodes) for g in empty] == [12] and drain == []


def test_unneeded_keeps_since_and_thresholds_are_strict() -> None:
    n = cnode("n1")
    first = update_unneeded({}, [(n, True)], NOW)
    again = update_unneeded(first, [(n, True)], NOW + 60)
    assert again["n1"].since == NOW
    defaults = AutoscalingOptions().node_group_defaults()
    sizes = {"ng1": GroupSizes(3, 1)}
    at_threshold = removable_at(
        list(again.values()), NOW + 600, lambda node: "ng1", lambda g: defaults, sizes
    )
    assert at_threshold.unremovable == {"n1": "NotUnneededLongEnough"}
    after = removable_at(list(again.values()), NOW + 600.5, lambda node: "ng1", lambda g: defaults, sizes)
    assert after.empty == ("n1",)


def test_cooldown() -> None:
    times = ScaleDownTimes(
        last_scale_up=NOW - 599, last_scale_down_fail=NOW - 3600, last_scale_down_delete=NOW
    )
    kw = {"delay_after_add": 600.0, "delay_after_failure": 180.0, "delay_after_delete": 0.0}
    assert scale_down_in_cooldown(times, NOW, **kw)
    assert not scale_down_in_cooldown(times, NOW + 1, **kw)
    assert scale_down_in_cooldown(ScaleDownTimes.at_start(NOW), NOW, disabled_this_loop=True, **kw)
