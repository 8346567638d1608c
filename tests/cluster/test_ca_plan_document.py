"""A loop's plan as a document and a log block (``/debug/plan``, ``-v=4``), an explanation read back
from its JSON, the record of each deletion a loop started, and what a loop said of one group."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from ca_loop_harness import Harness, node, pod, template
from hypothesis import given
from hypothesis import strategies as st

from kubetide.cluster.expander import ExpanderStep
from kubetide.cluster.explain import (
    Explanation,
    ExplanationFormatError,
    NodeExplanation,
    PodExplanation,
    explain_loop,
    format_time,
)
from kubetide.cluster.explain_cluster import (
    NodeDeletion,
    deletions_started,
    explain_group,
    render_deletions,
    render_group,
    update_deletions,
)
from kubetide.cluster.loop import plan_document, plan_text
from kubetide.cluster.loop.plan import Phase
from kubetide.cluster.loop.plan_document import loop_document
from kubetide.cluster.loop.plan_text import LISTED, render_plan
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.options import AutoscalingOptions
from kubetide.testing.cloud import RecordingCloud


def choice() -> Harness:
    """One pending pod of 1.5 CPU: ng (2 CPUs) and large (8 CPUs) can take it, least-waste keeps ng;
    tiny (1 CPU) cannot; full is at its max."""
    cloud = (
        RecordingCloud()
        .with_group("ng", 1, 5, 1, template=template("ng"))
        .with_group("large", 0, 5, 0, template=template("large", cpu=8000))
        .with_group("tiny", 0, 5, 0, template=template("tiny", cpu=1000))
        .with_group("full", 0, 0, 0, template=template("full"))
    )
    h = Harness(cloud, AutoscalingOptions.from_flags({"expander": "least-waste"}))
    h.add_node(node("n0", "ng"), "ng")
    h.add_pod(pod("busy", 1500, node_name="n0"))
    h.add_pod(pod("pending", 1500))
    return h


def idle(count: int = 3) -> Harness:
    """``count`` nodes, all but n0 idle: their deletion starts once unneeded for 10 minutes."""
    h = Harness(RecordingCloud().with_group("ng", 1, count + 2, count, template=template("ng")))
    for i in range(count):
        h.add_node(node(f"n{i}", "ng"), "ng")
    h.add_pod(pod("busy", 1500, node_name="n0"))
    return h


def test_every_phase_has_a_document_and_a_line() -> None:
    phases = set(get_args(Phase))
    assert phases == set(plan_document._DOCUMENTS) == set(plan_text._LINES)


def test_a_scale_up_loop_says_its_phases_the_groups_skipped_the_expanders_trace_and_the_choice() -> None:
    h = choice()
    result = h.run(0.0)
    doc = loop_document(result, 0.0)
    assert json.loads(json.dumps(doc)) == doc  # plain JSON
    assert (doc["scaleUpResult"], doc["plan"]["stopped"]) == ("Successful", "scale-up: Successful")
    (up,) = [p for p in doc["plan"]["phases"] if p["phase"] == "scaleUp"]
    assert up["pods"] == ["default/pending"] and up["podsTriggered"] == ["default/pending"]
    assert up["skippedGroups"] == {"full": ["max node group size reached"]}
    assert up["chosen"] == [{"group": "ng", "from": 1, "to": 2, "max": 5}]
    (least_waste,) = up["expander"]
    assert least_waste["filter"] == "least-waste" and least_waste["kept"] == ["ng"]
    assert set(least_waste["ratings"]) == {"ng", "large"}
    block = render_plan(result, format_time).splitlines()
    assert block[0] == "loop: scale-up Successful, scale-down InCooldown (ended early: scale-up: Successful)"
    assert (
        "  scale-up for 1 pod: Successful; skipped full (max node group size reached); "
        "expander least-waste kept ng; chosen ng 1->2"
    ) in block


def test_a_scale_down_loop_names_each_node_it_deletes_and_why() -> None:
    h = idle()
    h.ca.run_once(h.world(), 0.0)  # type: ignore[union-attr]
    result = h.ca.run_once(h.world(), 610.0)  # type: ignore[union-attr]
    doc = loop_document(result, 610.0)
    (down,) = [p for p in doc["plan"]["phases"] if p["phase"] == "scaleDown"]
    assert down["result"] == "NodeDeleteStarted"
    assert [(d["node"], d["empty"], d["reason"], d["unneededSince"]) for d in down["delete"]] == [
        ("n1", True, "empty", 0.0),
        ("n2", True, "empty", 0.0),
    ]
    assert doc["deletionsStarted"] == ["n1", "n2"] and doc["nodesDeleted"] == []
    (drain,) = [p for p in doc["plan"]["phases"] if p["phase"] == "drainRound"]
    assert drain["started"] and [s["step"] for s in drain["steps"]] == ["notYet", "notYet"]
    block = render_plan(result, format_time)
    assert "  scale-down: NodeDeleteStarted; delete n1 (ng, empty), n2 (ng, empty)" in block
    # --node-delete-delay-after-taint (5 s): each deletion's next step is then.
    assert "  deletions started: n1 notYet (next at 0:10:15), n2 notYet (next at 0:10:15)" in block
    deleted = h.ca.run_deletions(h.world(), 615.0)  # type: ignore[union-attr]
    assert loop_document(deleted, 615.0)["nodesDeleted"] == ["n1", "n2"]


def test_the_block_names_a_few_of_a_long_list_and_counts_the_rest() -> None:
    h = idle(count=LISTED + 6)
    result = h.ca.run_once(h.world(), 0.0)  # type: ignore[union-attr]
    (line,) = [x for x in render_plan(result, format_time).splitlines() if "scale-down:" in x]
    unneeded = sorted(f"n{i}" for i in range(1, LISTED + 6))
    assert f"unneeded {', '.join(f'{n} since 0:00:00' for n in unneeded[:LISTED])} and 5 more" in line
    (down,) = [p for p in loop_document(result, 0.0)["plan"]["phases"] if p["phase"] == "scaleDown"]
    assert sorted(down["unneeded"]) == unneeded  # the document lists them all


def test_a_loop_that_could_not_start_is_its_error_alone() -> None:
    result = LoopResult(error="failed to read the cluster: boom")
    assert loop_document(result, 5.0)["plan"] is None
    assert render_plan(result, format_time) == (
        "loop: scale-up -, scale-down -\n  error: failed to read the cluster: boom"
    )


def explanations() -> list[Explanation]:
    up = choice()
    stuck = Harness(RecordingCloud().with_group("ng", 1, 1, 1, template=template("ng")))
    stuck.add_node(node("n0", "ng"), "ng")
    stuck.add_pod(pod("busy", 1500, node_name="n0"))
    stuck.add_pod(pod("pending", 1500))
    down = idle()
    down.run(0.0)
    return [
        explain_loop(up.run(0.0), 0.0, up.world()),
        explain_loop(stuck.run(0.0), 0.0, stuck.world()),
        explain_loop(down.run(30.0), 30.0, down.world()),
    ]


def test_an_explanation_reads_back_from_its_json() -> None:
    for ex in explanations():
        doc = json.loads(json.dumps(ex.to_json()))
        assert Explanation.from_json(doc) == ex


def test_a_document_that_is_not_an_explanation_names_the_field() -> None:
    doc = explanations()[2].to_json()
    doc["scaleDown"]["nodes"][1]["unneededSince"] = "yesterday"
    with pytest.raises(
        ExplanationFormatError, match=r"^page: scaleDown\.nodes\[1\]\.unneededSince: must be a number$"
    ):
        Explanation.from_json(doc, "page")
    with pytest.raises(ExplanationFormatError, match=r"scaleUp: must be a mapping"):
        Explanation.from_json({"loopTime": 1, "scaleUp": [], "scaleDown": {}})


def test_each_deletion_is_kept_with_why_and_how_it_ended() -> None:
    h = idle()
    h.ca.run_once(h.world(), 0.0)  # type: ignore[union-attr]
    started = h.ca.run_once(h.world(), 610.0)  # type: ignore[union-attr]
    kept = update_deletions([], started, 610.0, keep=10)
    assert kept == deletions_started(started, 610.0)
    assert [(d.node, d.group, d.decided_at, d.empty, d.reason, d.unneeded_since) for d in kept] == [
        ("n1", "ng", 610.0, True, "empty", 0.0),
        ("n2", "ng", 610.0, True, "empty", 0.0),
    ]
    assert all(d.deleted_at is None and d.abandoned is None for d in kept)
    deleted = h.ca.run_deletions(h.world(), 615.0)  # type: ignore[union-attr]
    kept = update_deletions(kept, deleted, 615.0, keep=10)
    assert [d.deleted_at for d in kept] == [615.0, 615.0]
    text = "\n".join(render_deletions(kept))
    assert (
        "  n2 (group ng): scale-down chose it in the loop at 0:10:10: empty, unneeded since 0:00:00" in text
    )
    assert "    deleted at 0:10:15" in text
    assert NodeDeletion.from_json(json.loads(json.dumps(kept[0].to_json())), "d") == kept[0]


def test_a_deletion_abandoned_says_why_and_only_the_last_ones_are_kept() -> None:
    kept = [
        NodeDeletion(f"n{i}", "ng", 10.0, False, "underutilized", 0.0, "{0.10 0.10 0.10}") for i in range(3)
    ]
    failed = CAEvent("Warning", "ScaleDownFailed", "Node/n1", "failed to drain the node: pod stuck")
    after = update_deletions(kept, LoopResult(events=[failed]), 20.0, keep=2)
    assert [(d.node, d.abandoned) for d in after] == [
        ("n1", "failed to drain the node: pod stuck"),
        ("n2", None),
    ]
    assert "    deletion abandoned: failed to drain the node: pod stuck" in render_deletions(after)
    assert update_deletions(kept, LoopResult(), 20.0, keep=0) == []


def test_what_a_loop_said_of_each_group() -> None:
    h = choice()
    ex = explain_loop(h.run(0.0), 0.0, h.world())
    ng, large = explain_group(ex, "ng"), explain_group(ex, "large")
    assert ng.chosen == (1, 2) and ng.triggered == ("default/pending",)
    assert ng.expander[0][:2] == ("least-waste", True)
    assert large.chosen is None and large.expander[0][:2] == ("least-waste", False)
    assert large.expander[0][2] is not None  # least-waste says how it rated the group
    assert explain_group(ex, "full").skipped == ("max node group size reached",)
    assert render_group(explain_group(ex, "full"))[1] == "  not considered: max node group size reached"
    tiny = render_group(explain_group(ex, "tiny"))
    assert tiny[0] == "Group tiny in the loop at 0:00:00 (scale-up: Successful):"
    assert tiny[1].startswith("  no option, or dropped by an expander filter that does not rate")
    assert json.loads(json.dumps(large.to_json()))["expander"][0]["kept"] is False


def test_a_group_no_pod_can_use_names_each_pods_reason() -> None:
    cloud = (
        RecordingCloud()
        .with_group("ng", 1, 1, 1, template=template("ng"))
        .with_group("tiny", 0, 5, 0, template=template("tiny", cpu=1000))
    )
    h = Harness(cloud)
    h.add_node(node("n0", "ng"), "ng")
    h.add_pod(pod("busy", 1500, node_name="n0"))
    h.add_pod(pod("pending", 1500))
    ex = explain_loop(h.run(0.0), 0.0, h.world())
    assert explain_group(ex, "tiny").refused == {"default/pending": "Insufficient cpu"}
    assert "  pod default/pending cannot go there: Insufficient cpu" in render_group(
        explain_group(ex, "tiny")
    )
    assert explain_group(ex, "ng").skipped == ("max node group size reached",)
    quiet = idle()
    ex = explain_loop(quiet.run(0.0), 0.0, quiet.world())
    assert (
        render_group(explain_group(ex, "ng"))[1] == "  no pending pod needed a new node: no group was asked"
    )


names = st.text("abcdefgh-/0123456789", min_size=1, max_size=12)
times = st.floats(0, 4e9, allow_nan=False)
maybe = st.none() | names


@st.composite
def any_explanation(draw: st.DrawFn) -> Explanation:
    groups = draw(st.lists(names, unique=True, max_size=4))
    return Explanation(
        at=draw(times),
        scale_up_result=draw(names),
        scale_down_result=draw(names),
        pods=tuple(
            PodExplanation(
                pod,
                draw(maybe),
                draw(st.dictionaries(st.sampled_from(groups), names)) if groups else {},
                draw(st.booleans()),
            )
            for pod in draw(st.lists(names, unique=True, max_size=4))
        ),
        skipped_groups={g: tuple(draw(st.lists(names, max_size=2))) for g in groups[:2]},
        expander_steps=tuple(
            ExpanderStep(
                draw(names),
                tuple(draw(st.lists(names, max_size=3))),
                tuple(draw(st.dictionaries(names, names)).items()),
            )
            for _ in range(draw(st.integers(0, 3)))
        ),
        chosen=tuple((g, draw(st.integers(0, 99)), draw(st.integers(0, 99))) for g in groups[2:]),
        nodes=tuple(
            NodeExplanation(node, draw(st.none() | times), draw(maybe), draw(maybe), draw(maybe), draw(maybe))
            for node in draw(st.lists(names, unique=True, max_size=4))
        ),
    )


@given(any_explanation())
def test_any_explanation_reads_back_from_its_json(ex: Explanation) -> None:
    assert Explanation.from_json(json.loads(json.dumps(ex.to_json()))) == ex


@given(
    st.builds(
        NodeDeletion,
        names,
        names,
        times,
        st.booleans(),
        names,
        times,
        names,
        st.dictionaries(names, names),
        st.none() | times,
        maybe,
    )
)
def test_any_deletion_reads_back_from_its_json(d: NodeDeletion) -> None:
    assert NodeDeletion.from_json(json.loads(json.dumps(d.to_json())), "d") == d
