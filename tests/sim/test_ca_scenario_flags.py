"""Every Cluster Autoscaler flag in a scenario either works or is an error naming it (issue 8)."""

from __future__ import annotations

from typing import Any

import pytest
from scenario_builders import doc, load, problems

from kubetide.cluster.flags import parse_flags
from kubetide.sim.simulation import Simulation


def with_flags(**flags: Any) -> dict[str, Any]:
    return doc(autoscalers={"clusterAutoscaler": {"enabled": True, "flags": flags}})


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("cloud-provider", "aws", "not supported in a scenario"),
        ("node-group-auto-discovery", ["asg:tag=k8s.io/cluster-autoscaler/enabled"], "not supported"),
        ("scan-interval", "0s", "must be > 0"),
        ("scan-interval", 10, "with a unit"),
        ("max-node-provision-time", "900", "with a unit"),
        ("cores-total", "10", "<min>:<max>"),
        ("memory-total", "a:b", "<min>:<max>"),
        ("cores-total", "10:5", "<min>:<max>"),
        ("gpu-total", ["nvidia:1"], "<gpu type>:<min>:<max>"),
        ("expander", "random,priority", "random must be the last"),
        ("expander", "priority,priority", "multiple times"),
        ("expander", "grpc", "gRPC"),
        ("ca-compatibility-version", "1.35", "must be 1.31 or 1.36"),
        ("ca-compatibility-version", 1.3, "must be 1.31 or 1.36"),
        ("frequent-loops-enabled", True, "not implemented"),
    ],
)
def test_a_flag_a_scenario_cannot_honour_is_an_error_naming_it(flag: str, value: Any, message: str) -> None:
    found = problems(with_flags(**{flag: value}))
    assert any(f"flags.{flag}" in p and message in p for p in found), found


def test_valid_values_pass_and_zero_needs_no_unit() -> None:
    flags = {
        "scan-interval": "10s",
        "max-node-provision-time": 0,
        "cores-total": "0:320",
        "memory-total": "0:1280",
        "gpu-total": ["nvidia.com/gpu:0:8"],
        "expander": "priority,least-waste,random",
        "scale-up-progress-timeout": "3m",
    }
    load(with_flags(**flags))


def test_the_scenario_takes_the_compatibility_version_as_text_or_number() -> None:
    for value in ("1.36", 1.36):
        sim = Simulation(load(with_flags(**{"ca-compatibility-version": value})))
        assert sim.ca is not None
        assert sim.ca.options.ca_compatibility_version == "1.36" and sim.ca.options.expander == "least-waste"


def test_the_live_command_line_still_takes_the_cloud_flags() -> None:
    values, found = parse_flags({"cloud-provider": "kwok", "nodes": ["1:10:general"]})
    assert found == [] and values["cloud-provider"] == "kwok"


def test_requests_beyond_int64_are_an_error_not_a_crash() -> None:
    from scenario_builders import deployment

    web = deployment(replicas=1)
    web["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "99999999999999999999"
    found = problems(doc(objects=[web]))
    assert any("requests.cpu: too large" in p for p in found), found


def test_a_flag_kubetide_does_not_implement_takes_only_its_default_in_a_scenario() -> None:
    found = problems(with_flags(**{"salvo-scale-up": True}))
    assert any("flags.salvo-scale-up" in p and "not implemented" in p for p in found), found
    load(with_flags(**{"node-delete-delay-after-taint": "5s", "cordon-node-before-terminating": True}))
    _, found = parse_flags({"salvo-scale-up": True})  # the live command refuses it too
    assert found == [
        ("salvo-scale-up", "not implemented by kubetide yet: only its default (False) is accepted")
    ]


def test_nodes_chooses_the_groups_and_must_repeat_their_sizes() -> None:
    """--nodes in a scenario selects the groups CA manages, as on a command line; MIN:MAX must be the
    group's spec.nodeGroups sizes (the simulated cloud's), so no value is silently not applied."""
    assert load(with_flags(nodes=["1:10:general"])).spec.autoscalers.clusterAutoscaler is not None
    assert problems(with_flags(nodes=["1:20:general", "0:5:gpu", "five"])) == [
        "spec.autoscalers.clusterAutoscaler.flags.nodes[0]: sizes must be spec.nodeGroups[0]'s (1:10): "
        "the simulated cloud sizes its groups from spec.nodeGroups",
        "spec.autoscalers.clusterAutoscaler.flags.nodes[1]: no node group 'gpu' in spec.nodeGroups (general, spot)",
        "spec.autoscalers.clusterAutoscaler.flags.nodes[2]: must be MIN:MAX:NAME, got 'five'",
    ]
