"""Startup, status and ignore taints (CA's TaintConfig): a Ready node still carrying a startup taint
is not ready, so it counts as starting and its template (without the taint) takes the pending pods;
status taints only leave templates."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.flags import parse_flags
from kubetide.cluster.loop.templates import sanitize
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.taintconfig import TaintConfig, with_startup_tainted_unready
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import Call, RecordingCloud

CILIUM = "node.cilium.io/agent-not-ready"


def test_which_taints_are_startup_and_status_taints() -> None:
    config = TaintConfig.from_flags(
        startup=["example.com/a"],
        ignore=["example.com/b"],
        status=["example.com/c"],
        startup_prefixes=["boot/"],
    )
    assert config.is_startup("example.com/a") and config.is_startup("example.com/b")
    assert config.is_startup("startup-taint.cluster-autoscaler.kubernetes.io/x")
    assert config.is_startup("ignore-taint.cluster-autoscaler.kubernetes.io/x")
    assert config.is_startup("boot/cni")
    assert config.is_status("example.com/c") and config.is_status(
        "status-taint.cluster-autoscaler.kubernetes.io/x"
    )
    assert not config.is_startup("example.com/c") and not config.is_status("example.com/a")
    assert not config.left_out_of_templates("dedicated")


def test_only_ready_nodes_with_a_startup_taint_become_not_ready() -> None:
    config = TaintConfig.from_flags(startup=[CILIUM])
    starting = replace(node("a", "ng"), taints=(Taint(CILIUM, "", "NoSchedule"),))
    status = replace(
        node("b", "ng"), taints=(Taint("status-taint.cluster-autoscaler.kubernetes.io/x", "", "NoSchedule"),)
    )
    plain = replace(node("c", "ng"), taints=(Taint("dedicated", "batch", "NoSchedule"),))
    out = with_startup_tainted_unready([starting, status, plain], config)
    assert [n.ready for n in out] == [False, True, True]
    assert out[1] is status and out[2] is plain


def test_templates_leave_out_startup_and_status_taints_but_keep_the_others() -> None:
    config = TaintConfig.from_flags(startup=[CILIUM], status=["example.com/health"])
    taints = (
        Taint(CILIUM, "", "NoSchedule"),
        Taint("example.com/health", "degraded", "NoSchedule"),
        Taint("status-taint.cluster-autoscaler.kubernetes.io/disk", "", "NoSchedule"),
        Taint("dedicated", "batch", "NoSchedule"),
    )
    made = sanitize("ng", replace(node("n1", "ng"), taints=taints), [], False, config)
    assert [t.key for t in made.node.taints] == ["dedicated"]


def _starting_node(flags: dict[str, object]) -> Harness:
    """One group at 1 node that joined 30 s ago and still has Cilium's taint; one pending pod."""
    cloud = RecordingCloud().with_group("ng", 0, 5, target=1, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False, **flags}))
    h.add_node(replace(node("n1", "ng", created=-30.0), taints=(Taint(CILIUM, "", "NoSchedule"),)), "ng")
    h.add_pod(pod("web-1", 500))
    return h


def test_a_node_with_a_startup_taint_is_starting_so_no_second_node_is_bought() -> None:
    h = _starting_node({"startup-taint": [CILIUM]})
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == []  # the pod waits for n1, which is still starting
    # The same with CA's own prefix instead of a flag.
    h = _starting_node({})
    h.nodes["n1"] = replace(
        h.nodes["n1"], taints=(Taint("startup-taint.cluster-autoscaler.kubernetes.io/cni", "", "NoSchedule"),)
    )
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == []


def test_without_the_flag_the_taint_is_a_real_one_and_a_node_is_added() -> None:
    h = _starting_node({})
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "ng", (1,))]


def test_the_taint_flags_are_accepted_in_scenarios_and_on_the_command_line() -> None:
    flags = {
        "startup-taint": [CILIUM],
        "status-taint": ["a/b"],
        "ignore-taint": ["c/d"],
        "startup-taint-prefix": ["boot/"],
    }
    for scenario in (True, False):
        values, problems = parse_flags(flags, scenario=scenario)
        assert problems == []
    options = AutoscalingOptions.from_flags(values)
    assert options.startup_taint == (CILIUM,) and options.startup_taint_prefix == ("boot/",)
