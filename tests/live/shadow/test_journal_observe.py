"""The shadow's journal (JSON lines appended and synced, read back at start) and what it observes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kubetide.live.shadow.compare import (
    DELETE,
    SCALE_DOWN,
    SCALE_UP,
    Action,
    Closed,
    Disagreement,
    ShadowLoop,
    Step,
)
from kubetide.live.shadow.journal import DISAGREEMENTS, TIMELINE, Journal, JournalError
from kubetide.live.shadow.observe import ClusterLook, running_actions, status_scale_ups
from kubetide.live.shadow.shadow import ShadowRecorder


def disagreement(subject: str = "n1", at: float = 6.0) -> Disagreement:
    return Disagreement(
        "scale-down-running-only",
        subject,
        at,
        f"deleted node {subject}",
        "would have kept it",
        "pod p",
        {"g": 1},
        "g",
    )


def test_records_are_written_once_and_read_back_with_the_open_ones(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "shadow")
    a, b = disagreement("n1"), disagreement("n2")
    assert journal.record(a, "cluster-autoscaler", "CA deleted node n1")
    assert not journal.record(a, "cluster-autoscaler", "again")
    assert journal.record(b, "cluster-autoscaler", "CA deleted node n2")
    assert journal.close(Closed(a.id, 60.0)) and not journal.close(Closed(a.id, 61.0))
    journal.timeline({"at": 6.0, "targets": {"g": 1}})
    lines = (tmp_path / "shadow" / DISAGREEMENTS).read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["disagreement", "disagreement", "closed"]
    assert json.loads(lines[0])["message"] == "CA deleted node n1"
    again = Journal(tmp_path / "shadow")
    assert set(again.open) == {b.id} and again.open[b.id] == b
    assert not again.record(b, "cluster-autoscaler", "after a restart")
    assert not again.close(Closed(a.id, 62.0))
    assert len((tmp_path / "shadow" / TIMELINE).read_text().splitlines()) == 1


def test_a_torn_last_line_is_cut_off_and_the_next_record_starts_clean(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.record(disagreement("n1"), "c", "m")
    with (tmp_path / DISAGREEMENTS).open("a") as f:
        f.write('{"type":"disagreement","id":"torn')  # the crash
    again = Journal(tmp_path)
    assert again.record(disagreement("n2"), "c", "m")
    records = [json.loads(line) for line in (tmp_path / DISAGREEMENTS).read_text().splitlines()]
    assert [r["subject"] for r in records] == ["n1", "n2"]


def test_a_journal_that_does_not_read_is_an_error_naming_the_line(tmp_path: Path) -> None:
    (tmp_path / DISAGREEMENTS).write_text('{"type":"disagreement","id":"x"}\nnot json\n')
    with pytest.raises(JournalError, match=r"disagreements.jsonl:1: .*record 'x'|disagreements.jsonl:2"):
        Journal(tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(JournalError, match=r"cannot create|not a directory"):
        Journal(tmp_path / "file")


def test_between_two_looks_a_raised_target_is_a_scale_up_and_a_node_gone_or_tainted_a_deletion() -> None:
    before = ClusterLook(0.0, {"a": 1, "b": 2}, {"a-1": "a", "b-1": "b", "b-2": "b"})
    after = ClusterLook(2.0, {"a": 3, "b": 1, "new": 1}, {"a-1": "a", "a-2": "a"}, removing={"b-1": "b"})
    assert running_actions(None, after) == ()
    assert running_actions(before, after) == (
        Action(SCALE_UP, "a", "a", 2.0, amount=2, size=1),
        Action(DELETE, "b-1", "b", 2.0),
        Action(DELETE, "b-2", "b", 2.0),
    )
    # Escalator decides "n nodes of a group" and taints them: the nodes newly tainted, none named.
    assert running_actions(before, after, group_scale_downs=True) == (
        Action(SCALE_UP, "a", "a", 2.0, amount=2, size=1),
        Action(SCALE_DOWN, "b", "b", 2.0, amount=1, size=2),
    )
    tainted = ClusterLook(4.0, after.targets, {"a-1": "a"}, removing={"b-1": "b", "a-2": "a"})
    assert running_actions(after, tainted, group_scale_downs=True) == (
        Action(SCALE_DOWN, "a", "a", 4.0, size=3),
    )
    # A node already being removed is not removed again when it goes.
    later = ClusterLook(4.0, after.targets, {"a-1": "a", "a-2": "a"})
    assert running_actions(after, later) == ()


def test_times_come_from_the_cluster_when_it_says_them_between_the_two_looks() -> None:
    status = (
        "time: 2026-11-28 02:00:09.5 +0000 UTC\nautoscalerStatus: Running\nnodeGroups:\n"
        '- name: a\n  scaleUp:\n    status: InProgress\n    lastTransitionTime: "2026-11-28T02:00:07Z"\n'
        '- name: b\n  scaleUp:\n    status: NoActivity\n    lastTransitionTime: "2026-11-28T02:00:07Z"\n'
        "- name: c\n  scaleUp: {status: InProgress, lastTransitionTime: not-a-time}\n"
    )
    since = status_scale_ups(status)
    t = since["a"]
    assert since == {"a": t} and time.strftime("%H:%M:%S", time.gmtime(t)) == "02:00:07"
    assert (
        status_scale_ups("::: not yaml") == {}
        and status_scale_ups(None) == {}
        and status_scale_ups("[1]") == {}
    )
    before = ClusterLook(t - 5, {"a": 1}, {"n1": "a", "n2": "a"})
    after = ClusterLook(
        t + 3,
        {"a": 2},
        {},
        removing={"n1": "a", "n2": "a"},
        removing_since={"n1": t - 5.5, "n2": t - 60},
        scale_up_since={"a": t},
    )
    assert running_actions(before, after) == (
        Action(SCALE_UP, "a", "a", t, amount=1, size=1),
        Action(DELETE, "n1", "a", t - 5),  # a whole second of the taint: not before the earlier look
        Action(DELETE, "n2", "a", t + 3),  # said before the earlier look: the later look's time
    )


def test_a_restarted_shadow_goes_on_with_its_open_records_and_writes_none_twice(tmp_path: Path) -> None:
    """Two processes, one journal: the episode kubetide's deletion intent began before the restart is
    the same record after it, and it closes once."""
    want = Action(DELETE, "n1", "g", 0.0, why="empty")

    def steps(recorder: ShadowRecorder, times: range, *intents: Action) -> None:
        for t in times:
            recorder.step(Step(ShadowLoop(float(t), intents)), {})

    first = ShadowRecorder("cluster-autoscaler", "CA", Journal(tmp_path), 10.0)
    steps(first, range(0, 30, 2), want)
    second = ShadowRecorder("cluster-autoscaler", "CA", Journal(tmp_path), 10.0)  # the restart
    steps(second, range(100, 140, 2), want)
    steps(second, range(140, 144, 2))
    records = [json.loads(line) for line in (tmp_path / DISAGREEMENTS).read_text().splitlines()]
    assert [(r["type"], r["id"]) for r in records] == [
        ("disagreement", "scale-down-kubetide-only/n1/0.000"),
        ("closed", "scale-down-kubetide-only/n1/0.000"),
    ]
    assert len((tmp_path / TIMELINE).read_text().splitlines()) == 15 + 20 + 2
