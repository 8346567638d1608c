"""``scaleNodeGroup`` end to end against the conformance cases: one run (or a few) of one node group."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kubetide.escalator import AsgSnapshot, GroupMemory, Message
from kubetide.escalator.decision import escalator_scale_node_group
from kubetide.escalator.requests import CpuMem
from kubetide.escalator.taints import escalator_bucket_nodes
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

from .builders import T0, World, group, node, nodes, pod, pods
from .cases import params

GROUP_KEYS = {
    "name", "min_nodes", "max_nodes", "scale_up_threshold_percent", "scale_on_starve",
    "taint_lower_capacity_threshold_percent", "taint_upper_capacity_threshold_percent",
    "fast_node_removal_rate", "slow_node_removal_rate", "soft_delete_grace_period",
    "taint_effect", "scale_up_cool_down_period", "max_node_age",
}  # fmt: skip


def _group(spec: dict[str, Any]) -> Any:
    return group(**{k: v for k, v in spec.items() if k in GROUP_KEYS})


def _asg(case_input: dict[str, Any], total_nodes: int) -> AsgSnapshot:
    if "asg" in case_input:
        a = case_input["asg"]
        return AsgSnapshot(a["min"], a["max"], a["target"])
    g = case_input["node_group"]
    # Upstream's test cloud group mirrors the options: min/max nodes, sized to the listed nodes.
    return AsgSnapshot(g.get("min_nodes", 0), g.get("max_nodes", 0), total_nodes)


_BOUND = re.compile(r"(\d+) pods? of (\d+)m/(\d+)B(?:, (\d+) per node)?")


def _starve_pods(spec: dict[str, Any], listed: list[NodeView]) -> list[Pod]:
    out: list[Pod] = []
    bound = _BOUND.match(spec["bound"])
    if bound:
        count, cpu, mem = (int(g) for g in bound.groups()[:3])
        per_node = int(bound.group(4) or 1)
        # Bound with PodScheduled=True, phase still Pending: they count as pending and use room.
        out += [pod(f"b{k}", cpu, mem, node_name=listed[k // per_node].name) for k in range(count)]
    unbound = _BOUND.match(spec.get("unbound", ""))
    if unbound:
        count, cpu, mem = (int(g) for g in unbound.groups()[:3])
        out += [pod(f"u{k}", cpu, mem) for k in range(count)]
    return out


@pytest.mark.parametrize("case", params("escalator_scale_node_group"))
def test_scale_node_group(case: dict[str, Any]) -> None:
    i, want = case["input"], case["expected"]
    if "extra_runs" in i:
        _multirun(case)
        return
    g = _group(i["node_group"])
    listed: list[NodeView]
    if isinstance(i.get("nodes"), list):  # max node age: nodes of given ages, some tainted
        listed = [
            node(f"n{k}", s["cpu_m"], s["mem_bytes"], created=T0 - 3600 * s["age_h"],
                 tainted_at=T0 - 60 if s["tainted"] else None)
            for k, s in enumerate(i["nodes"])
        ]  # fmt: skip
    elif isinstance(i.get("nodes"), dict):  # scale on starve
        spec = i["nodes"]
        listed = nodes(spec["count"], spec["cpu_m"], spec["mem_bytes"])
    else:
        u = i["untainted_nodes"]
        listed = nodes(u["count"], u.get("cpu_m", 0), u.get("mem_bytes", 0))
        tainted = i.get("tainted_nodes", 0)
        if isinstance(tainted, dict):
            listed += nodes(tainted["count"], tainted["cpu_m"], tainted["mem_bytes"], prefix="t",
                            tainted_at=T0 - 60, created=T0 - 7200)  # fmt: skip
        else:
            listed += nodes(tainted, u["cpu_m"], u["mem_bytes"], prefix="t", tainted_at=T0 - 60)
    p = i["pods"]
    if isinstance(p, list):
        listed_pods: list[Pod] = []
    elif "bound" in p and isinstance(p["bound"], str):
        listed_pods = _starve_pods(p, listed)
    else:
        listed_pods = pods(p["count"], p["cpu_m"], p["mem_bytes"])

    world = World(g, listed, listed_pods, _asg(i, len(listed)))
    start_target = world.asg.target_size
    d = world.run(T0)
    if "error" in want:
        assert d.error == want["error"]
    else:
        assert d.error is None
    if "delta" in want:
        assert d.delta == want["delta"]
    if "asg_target_after" in want:
        assert world.asg.target_size == start_target + d.delta == want["asg_target_after"]
    if "second_run_delta_after_nodes_arrive" in want:
        # The cloud's new nodes register (same size); no cool-down is configured, so the next run
        # decides afresh and must not scale again.
        u = i["untainted_nodes"]
        world.nodes += nodes(d.delta, u["cpu_m"], u["mem_bytes"], prefix="new", created=T0 + 30)
        assert world.run(T0 + 60).delta == want["second_run_delta_after_nodes_arrive"]
    if "untainted_after" in want:
        buckets = escalator_bucket_nodes(world.nodes)
        assert (len(buckets.untainted), len(buckets.tainted)) == (
            want["untainted_after"],
            want["tainted_after"],
        )
    if case["id"] == "esc-untaint-before-cloud":
        # Upstream untaints the 5 and then asks the cloud for 5 more, refused at the ASG max (only
        # logged). kubetide clamps the scale-up to max_nodes first (a hard limit, as Escalator's docs
        # say; README "Differences from Escalator"), so the cloud is not asked: same nodes, its own note.
        assert d.notes == (Message.at_max_nodes(10, 5, 10),) and d.increase == 0


def _multirun(case: dict[str, Any]) -> None:
    """Upstream runs once, then ``extra_runs`` more, advancing a mock clock by a minute before each.

    Two upstream clock details matter. The taint value is written with the real clock in whole
    seconds while the reaper compares against the mock clock, so a node tainted in the first run is
    a fraction of a second *more* than one minute old a minute later: these runs start at T0, half a
    second past a whole second, for the same effect (``age > soft_delete_grace_period`` is strict).
    And the scale lock reads the real clock, which the mock does not move: in the scale-from-zero
    cases the lock taken in the first run is still held during the extra run, so they run it within
    the one-minute cool-down (the reaper plays no part there: nothing is tainted).
    """
    i, want = case["input"], case["expected"]
    g = _group(i["node_group"])
    u, p = i["untainted_nodes"], i["pods"]
    memory = GroupMemory()
    if i["cached_capacity"]:
        memory = GroupMemory(
            cached_node=CpuMem(i["cached_capacity"]["cpu_m"], i["cached_capacity"]["mem_bytes"])
        )
    world = World(g, nodes(u["count"], u["cpu_m"], u["mem_bytes"]), pods(p["count"], p["cpu_m"], p["mem_bytes"]),
                  _asg(i, u["count"]), memory)  # fmt: skip
    first = world.run(T0)
    assert first.delta == want["first_run_delta"]
    locked_runs = g.scale_up_cool_down_s > 0
    for k in range(1, i["extra_runs"] + 1):
        world.run(T0 + (1.0 * k if locked_runs else 60.0 * k))
    assert world.asg.target_size == world.size == want["asg_target_and_size_after_all_runs"]


def test_cases_cover_every_branch_once() -> None:
    # Sanity: the default-group pods of these cases must all belong to the group.
    d = escalator_scale_node_group(group(max_nodes=10), nodes(1), pods(1, 10, 10), AsgSnapshot(0, 10, 1),
                                   GroupMemory(), T0)  # fmt: skip
    assert d.requests.total == CpuMem(10, 10)
