"""Cluster Autoscaler's drainability conformance cases (``kind: drainability``): which pods move, which
are evicted as DaemonSet pods, and which pod blocks the node, with the upstream reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import PDB, DrainContext, DrainOptions, drain_node

from .builders import owner, pod, selector

CASES = [
    c
    for c in json.loads((Path(__file__).parent / "data" / "ca_cases.json").read_text())
    if c["kind"] == "drainability"
]
NOW = 1_000_000.0


def _pod(spec: dict[str, Any]) -> Pod:
    annotations = dict(spec.get("annotations", {}))
    if spec.get("mirror"):
        annotations["kubernetes.io/config.mirror"] = "x"
    p = pod(
        spec["name"],
        namespace=spec.get("namespace", "default"),
        owners=owner(f"{spec['name']}-owner", spec["owner"]) if spec.get("owner") else (),
        labels=spec.get("labels"),
        annotations=annotations,
        node_name="node",
    )
    fields: dict[str, Any] = {
        "volumes": tuple(spec.get("volumes", ())),
        "restart_policy": spec.get("restart_policy", "Always"),
        "phase": spec.get("phase", "Running"),
        "termination_grace_s": spec.get("termination_grace_period_s"),
        "creation_time": NOW - spec["created_s_before_now"] if "created_s_before_now" in spec else None,
        "deletion_time": NOW - spec["deletion_timestamp_s_before_now"]
        if "deletion_timestamp_s_before_now" in spec
        else None,
    }
    for name, value in fields.items():
        object.__setattr__(p, name, value)
    return p


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in CASES])
def test_drainability(case: dict[str, Any]) -> None:
    inp, exp = case["input"], case["expected"]
    opts = inp["options"]
    pods = [_pod(p) for p in inp["pods"]]
    controllers = None
    if inp.get("listers"):
        # Listers present: every owner exists with one replica (the cases do not exercise the counts).
        controllers = {(c.kind, p.namespace, c.name): 1 for p in pods for c in p.owners}
    ctx = DrainContext(
        NOW,
        DrainOptions(
            opts["skip_nodes_with_system_pods"],
            opts["skip_nodes_with_local_storage"],
            opts["skip_nodes_with_custom_controller_pods"],
            blocking_system_pod_timeout_s=opts["bsp_disruption_timeout_s"],
        ),
        tuple(
            PDB(d["namespace"], selector(**d["selector"]), d["disruptions_allowed"])
            for d in inp.get("pdbs", ())
        ),
        controllers,
    )
    result = drain_node(pods, ctx)
    if "blocking" in exp:
        assert result.blocking is not None
        assert (result.blocking[0].name, result.blocking[1].value) == (
            exp["blocking"]["pod"],
            exp["blocking"]["reason"],
        )
        return
    assert result.blocking is None
    assert [p.name for p in result.pods_to_move] == exp["pods_to_move"]
    if "daemonset_pods" in exp:
        assert [p.name for p in result.daemonset_pods] == exp["daemonset_pods"]
    if "on_completion_pods" in exp:
        assert [p.name for p in result.on_completion_pods] == exp["on_completion_pods"]
        assert not result.drainable
