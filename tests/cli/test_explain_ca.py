"""`kubetide explain SCENARIO --at TIME`: the cluster autoscaler's loop at that time, explained from its
own decision values, as text and JSON; bad input named, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubetide.cli import main

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "cluster-autoscaler.yaml")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["explain", *args])
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


def test_a_failover_loop_says_which_group_was_skipped_and_which_expander_chose() -> None:
    # 11:04:40: the spot group's stockout (10h-12h) has backed it off; the pods go to on-demand.
    code, out, err = run(EXAMPLE, "--at", "39880s")
    assert code == 0, err
    assert out.startswith("Cluster autoscaler loop at 11:04:39")
    assert "group spot not considered: in backoff after failed scale-up" in out
    assert (
        "expander priority: kept on-demand (priority 10)" in out and "chosen: group on-demand 2 -> 3" in out
    )
    assert "triggered scale-up on-demand 2->3 (max: 8)" in out
    # The loop that scaled up ends before scale-down (static_autoscaler.go RunOnce, postScaleUp: "No
    # scale down in this iteration"), so no node is evaluated in it (issue 23 item 9).
    assert "Scale-down: InCooldown" in out and "spot-5: not evaluated this loop" in out


def test_json_and_filters() -> None:
    code, out, _ = run(EXAMPLE, "--at", "39880s", "--json", "--node", "spot-1")
    assert code == 0
    doc = json.loads(out)
    assert doc["loopTime"] == 39879.899
    assert doc["scaleUp"]["skippedGroups"] == {"spot": ["in backoff after failed scale-up"]}
    assert doc["scaleUp"]["expander"] == [
        {"filter": "priority", "kept": ["on-demand"], "ratings": {"on-demand": "priority 10"}}
    ]
    assert doc["scaleUp"]["chosen"] == [{"group": "on-demand", "from": 2, "to": 3}]
    assert [n["node"] for n in doc["scaleDown"]["nodes"]] == ["spot-1"]
    # Not evaluated: the loop scaled up and ended before scale-down (static_autoscaler.go RunOnce).
    assert doc["scaleDown"]["result"] == "InCooldown"
    assert doc["scaleDown"]["nodes"][0]["unremovableReason"] is None
    pods = doc["pods"]
    assert pods and all(p["triggeredScaleUp"] == "on-demand 2->3 (max: 8)" for p in pods)


def test_bad_input_is_named_and_exits_2(tmp_path: Path) -> None:
    code, _, err = run(EXAMPLE, "--at", "soon")
    assert code == 2 and "--at:" in err
    code, _, err = run(EXAMPLE, "--at", "30h")
    assert code == 2 and "after the end of the scenario" in err
    code, _, err = run(EXAMPLE, "--at", "2h", "--pod", "shop/nope", "--node", "nowhere")
    assert code == 2 and "--pod shop/nope: no pending pod" in err and "--node nowhere: no node" in err
    plain = tmp_path / "no-ca.yaml"
    plain.write_text(Path(EXAMPLE).read_text().replace("clusterAutoscaler:", "clusterAutoscalerOff:"))
    code, _, err = run(str(plain), "--at", "1h")
    assert code == 2 and "Traceback" not in err


SNAPSHOT = str(Path(__file__).resolve().parents[2] / "examples" / "ca-explain-snapshot.yaml")


def test_a_snapshot_file_is_explained_without_changing_anything() -> None:
    code, out, err = run("--snapshot", SNAPSHOT)
    assert code == 0, err
    assert out.startswith("Cluster autoscaler loop at 2026-11-24T05:00:00Z")
    assert "group general not considered: max node group size reached" in out
    assert "gpu: node(s) had untolerated taint {nvidia.com/gpu: true}" in out
    assert "general-2: kept: BlockedByPod (pod shop/db-0: NotEnoughPdb)" in out
    code, out, _ = run("--snapshot", SNAPSHOT, "--json", "--pod", "ml/trainer")
    doc = json.loads(out)
    assert doc["pods"] == [
        {
            "pod": "ml/trainer",
            "triggeredScaleUp": None,
            "fitsUpcomingNodes": False,
            "groups": {
                "general": "max node group size reached",
                "gpu": "node(s) had untolerated taint {nvidia.com/gpu: true}",
            },
        }
    ]


def test_every_problem_of_a_snapshot_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubetide.io/v1alpha1\n"
        "kind: Snapshot\n"
        "time: yesterday\n"
        "flags: {scan-intervall: 10s}\n"
        "nodeGroups:\n"
        "  - {name: a, minSize: 3, maxSize: 1, nodes: [ghost], extra: 1}\n"
        "objects: []\n"
    )
    code, _, err = run("--snapshot", str(bad))
    assert code == 2 and "Traceback" not in err
    for expected in (
        "kind: must be ClusterAutoscalerSnapshot",
        "time:",
        "flags.scan-intervall: unknown Cluster Autoscaler flag",
        "nodeGroups[0].extra: unknown field",
        "nodeGroups[0].maxSize: must be >= minSize",
        "nodeGroups[0].nodes[0]: no Node 'ghost' in objects",
    ):
        assert expected in err, (expected, err)
    code, _, err = run("--snapshot", SNAPSHOT, "--at", "1h")
    assert code == 2 and "--at: not with --snapshot" in err
    code, _, err = run()
    assert code == 2 and "give SCENARIO and --at TIME, or --snapshot FILE" in err


def test_why_not_a_group_in_a_simulated_loop_and_in_a_snapshot() -> None:
    # 11:04:40: spot is backed off after its stockout; the priority expander keeps on-demand.
    code, out, err = run(EXAMPLE, "--at", "39880s", "--group", "spot", "--group", "on-demand")
    assert code == 0, err
    pods = [p["pod"] for p in json.loads(run(EXAMPLE, "--at", "39880s", "--json")[1])["pods"]]
    assert pods and out == (
        "Group spot in the loop at 11:04:39 (scale-up: Successful):\n"
        "  not considered: in backoff after failed scale-up\n"
        "Group on-demand in the loop at 11:04:39 (scale-up: Successful):\n"
        "  expander priority: kept (priority 10)\n"
        "  chosen: 2 -> 3\n" + "".join(f"  pod {p} triggered the scale-up\n" for p in pods)
    )
    code, out, _ = run(EXAMPLE, "--at", "39880s", "--json", "--group", "spot")
    assert json.loads(out)["groups"]["spot"]["notConsidered"] == ["in backoff after failed scale-up"]
    code, out, _ = run("--snapshot", SNAPSHOT, "--group", "gpu", "--pod", "ml/trainer")
    assert code == 0
    assert out.endswith(
        "Group gpu in the loop at 2026-11-24T05:00:00Z (scale-up: NoOptionsAvailable):\n"
        "  pod ml/trainer cannot go there: node(s) had untolerated taint {nvidia.com/gpu: true}\n"
    )
    code, _, err = run(EXAMPLE, "--at", "1h", "--group", "nope")
    assert code == 2 and "--group nope: no node group of that name (known: on-demand, spot)" in err
