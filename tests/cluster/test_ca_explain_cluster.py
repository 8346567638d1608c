"""``/debug/plan`` and ``kubetide explain --cluster``: the loops of a cluster autoscaler (the real loop on
the port doubles) published as the live reporter publishes them, served by the live status server on
a loopback port, and explained by the command: why a node was deleted, why a group was not chosen;
the last scale-up kept while later loops say nothing of it; bad input and a wrong address named."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator, Mapping

import pytest
from ca_loop_harness import Harness, node, pod, template
from click.testing import CliRunner
from prometheus_client import CollectorRegistry

from kubetide.cli import main
from kubetide.cluster.options import AutoscalingOptions
from kubetide.kube.http import HealthTracker, StatusServer
from kubetide.live.cluster_autoscaler.metrics import CAMetrics
from kubetide.live.cluster_autoscaler.published import PAGE_PATH, PublishedPlans, read_page
from kubetide.live.cluster_autoscaler.reporter import CALoopReporter
from kubetide.testing.cloud import RecordingCloud


class Published:
    """A harness whose every loop and deletions pass goes through the live reporter, as the runner's."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.plans = PublishedPlans(keep_deletions=10)
        self.world = h.world()
        self.reporter = CALoopReporter(
            CAMetrics(per_nodegroup=False, registry=CollectorRegistry()),
            h.cloud,
            h.options,
            _NoStatus(),
            published=self.plans,
            world_of_loop=lambda: self.world,
        )

    def loop(self, now: float) -> None:
        assert self.h.ca is not None
        self.world = self.h.world()
        self.reporter.loop_started(now)
        self.reporter.loop_finished(self.h.ca.run_once(self.world, now), now)

    def deletions(self, now: float) -> None:
        assert self.h.ca is not None
        self.reporter.deletions_finished(self.h.ca.run_deletions(self.h.world(), now), now)


class _NoStatus:
    def write(self, text: str, last_updated: str) -> None:
        pass


def cluster() -> Published:
    """ng (2 CPUs, n0 busy, n1 and n2 idle) and large (8 CPUs); least-waste picks ng for a pending pod."""
    cloud = (
        RecordingCloud()
        .with_group("ng", 1, 6, 3, template=template("ng"))
        .with_group("large", 0, 5, 0, template=template("large", cpu=8000))
    )
    h = Harness(cloud, AutoscalingOptions.from_flags({"expander": "least-waste"}))
    for name in ("n0", "n1", "n2"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("busy", 1500, node_name="n0"))
    return Published(h)


def history() -> Published:
    """n1 and n2 deleted (decided at 610, deleted at 615), then a pod that needs a node: ng scaled up at
    620, and a loop at 630 that says nothing of it (the node is on its way)."""
    p = cluster()
    p.loop(0.0)
    p.loop(610.0)
    p.deletions(615.0)
    p.h.add_pod(pod("web", 1500, created=600.0))
    p.loop(620.0)
    p.loop(630.0)
    return p


def test_the_page_keeps_the_last_loop_the_last_scale_up_and_each_deletion() -> None:
    p = history()
    code, doc = p.plans.page({})
    assert code == 200 and json.loads(json.dumps(doc)) == doc
    assert (doc["component"], doc["mode"], doc["loops"]) == ("cluster-autoscaler", "acting", 4)
    assert (
        doc["latest"]["loop"]["loopTime"] == 630.0 and doc["latest"]["loop"]["scaleUpResult"] == "NotNeeded"
    )
    up = doc["lastScaleUp"]
    assert up["loop"]["loopTime"] == 620.0 and up["explanation"]["scaleUp"]["chosen"] == [
        {"group": "ng", "from": 1, "to": 2}
    ]
    assert [(d["node"], d["decidedAt"], d["deletedAt"]) for d in doc["deletions"]] == [
        ("n1", 610.0, 615.0),
        ("n2", 610.0, 615.0),
    ]
    page = read_page(doc, "page")
    assert page.latest is not None and page.latest.at == 630.0
    assert page.last_scale_up is not None and page.last_scale_up.explanation.chosen == (("ng", 1, 2),)


def test_the_page_answers_for_one_node_or_one_group() -> None:
    p = history()
    code, doc = p.plans.page({"node": "n1"})
    assert code == 200 and doc["lastLoop"] is None and doc["deletions"][0]["reason"] == "empty"
    code, doc = p.plans.page({"node": "n0"})
    assert (
        code == 200 and doc["lastLoop"]["unremovableReason"] == "NotUnderutilized" and doc["deletions"] == []
    )
    code, doc = p.plans.page({"node": "n9"})
    assert code == 404 and "no node n9" in doc["error"]
    code, doc = p.plans.page({"group": "large"})
    assert code == 200 and doc["lastScaleUp"]["chosen"] == [{"group": "ng", "from": 1, "to": 2, "max": 6}]


def test_each_loop_is_one_block_at_v4(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="kubetide.cluster-autoscaler"):
        history()
    blocks = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    loops = [b for b in blocks if b.startswith("loop: ")]
    assert len(loops) == 4
    assert "\n  scale-down: NodeDeleteStarted; delete n1 (ng, empty), n2 (ng, empty); " in loops[1]
    assert loops[2].splitlines()[0] == (
        "loop: scale-up Successful, scale-down InCooldown (ended early: scale-up: Successful)"
    )
    (between,) = [b for b in blocks if b.startswith("deletions between loops")]
    assert between == "deletions between loops\n  deletions in progress: n1 look, n2 look"


@pytest.fixture
def served() -> Iterator[str]:
    p = history()
    server = StatusServer("127.0.0.1:0", HealthTracker(), pages={PAGE_PATH: p.plans.page}).start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


def explain(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["explain", *args])
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


def test_explain_cluster_says_the_last_loop_the_last_scale_up_and_the_deletions(served: str) -> None:
    code, out, err = explain("--cluster", "--address", served)
    assert code == 0, err
    assert out.startswith(f"Cluster autoscaler at {served} (acting; 4 loops since it started)\n\n")
    assert "Cluster autoscaler loop at 0:10:30\n\nScale-up: NotNeeded" in out
    assert "The last loop that scaled up:\nCluster autoscaler loop at 0:10:20" in out
    assert "  chosen: group ng 1 -> 2" in out and "  default/web: triggered scale-up ng 1->2 (max: 6)" in out
    assert "Node deletions this cluster autoscaler started (newest first):" in out
    assert "  n1 (group ng): scale-down chose it in the loop at 0:10:10: empty, unneeded since 0:00:00" in out


def test_why_was_a_node_deleted(served: str) -> None:
    code, out, err = explain("--cluster", "--address", served, "--node", "n2")
    assert code == 0, err
    assert out.splitlines()[2:] == [
        "Node deletions this cluster autoscaler started (newest first):",
        "  n2 (group ng): scale-down chose it in the loop at 0:10:10: empty, unneeded since 0:00:00",
        "    deleted at 0:10:15",
    ]


def test_why_not_a_group(served: str) -> None:
    code, out, err = explain("--cluster", "--address", served, "--group", "large")
    assert code == 0, err
    assert "Group large in the loop at 0:10:20 (scale-up: Successful):" in out
    (line,) = [x for x in out.splitlines() if x.startswith("  expander least-waste")]
    assert line.startswith("  expander least-waste: not kept (")
    code, out, _ = explain("--cluster", "--address", served, "--group", "large", "--json")
    doc = json.loads(out)
    assert [g["loopTime"] for g in doc["groups"]["large"]] == [630.0, 620.0]
    assert doc["groups"]["large"][1]["expander"][0]["kept"] is False and doc["deletions"] == []


def test_a_dry_runs_explanation_says_nothing_was_changed() -> None:
    p = history()
    p.plans.mode = "dry-run"
    server = StatusServer("127.0.0.1:0", HealthTracker(), pages={PAGE_PATH: p.plans.page}).start()
    try:
        code, out, err = explain("--cluster", "--address", f"http://127.0.0.1:{server.port}", "--node", "n1")
    finally:
        server.stop()
    assert code == 0, err
    assert out.splitlines()[:2] == [
        f"Cluster autoscaler at http://127.0.0.1:{server.port} (dry-run; 4 loops since it started)",
        "A dry run: every scale-up and deletion below was only said (logged), nothing was changed.",
    ]


def test_a_node_or_pod_it_cannot_answer_for_is_named(served: str) -> None:
    code, _, err = explain("--cluster", "--address", served, "--node", "n9", "--pod", "default/nope")
    assert code == 2
    assert "--node n9: not in the last loop, nor among the last 2 deletion(s) kept" in err
    assert "--pod default/nope: not a pending pod in the last loop, nor in the last scale-up" in err


def test_cluster_takes_no_scenario_and_a_wrong_address_is_named() -> None:
    code, _, err = explain(
        "--cluster", "examples/cluster-autoscaler.yaml", "--at", "1h", "--address", "ftp://x"
    )
    assert code == 2
    assert "SCENARIO: not with --cluster" in err and "--at: not with --cluster" in err
    assert "--address: must be an http:// or https:// URL like http://127.0.0.1:8085, got 'ftp://x'" in err


def test_an_address_that_is_not_a_cluster_autoscaler_exits_1() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = explain("--cluster", "--address", f"http://127.0.0.1:{port}")
    assert code == 1 and f"http://127.0.0.1:{port}/debug/plan" in err

    def other(query: Mapping[str, str]) -> tuple[int, object]:
        return 200, {"component": "horizontal-pod-autoscaler"}

    server = StatusServer("127.0.0.1:0", HealthTracker(), pages={PAGE_PATH: other}).start()
    try:
        code, _, err = explain("--cluster", "--address", f"http://127.0.0.1:{server.port}")
    finally:
        server.stop()
    assert code == 1 and "not a cluster autoscaler's /debug/plan page" in err
