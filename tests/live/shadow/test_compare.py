"""The shadow's comparison: a pure function of the running autoscaler's actions and kubetide's plans."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.live.shadow.compare import (
    DELETE,
    REPLICAS,
    SCALE_UP,
    Action,
    Closed,
    Compared,
    Comparison,
    Disagreement,
    Kept,
    ShadowLoop,
    Step,
    compare,
    unmatched_scale_ups,
)

W = 10.0


def run(
    steps: Sequence[Step], state: Comparison | None = None
) -> tuple[Comparison, list[Disagreement], list[Closed]]:
    state = state or Comparison(W)
    opened: list[Disagreement] = []
    closed: list[Closed] = []
    for step in steps:
        state, o, c = compare(state, step)
        opened += o
        closed += c
    return state, opened, closed


def up(group: str, at: float, amount: int = 1, size: int = 1, why: str = "") -> Action:
    return Action(SCALE_UP, group, group, at, amount=amount, size=size, why=why)


def delete(node: str, group: str, at: float, why: str = "") -> Action:
    return Action(DELETE, node, group, at, why=why)


def loop(at: float, *intents: Action, kept: dict[str, Kept] | None = None, idle: str = "") -> ShadowLoop:
    return ShadowLoop(at, intents, kept or {}, idle)


def test_the_same_scale_up_within_the_window_is_an_agreement() -> None:
    steps = [
        Step(loop(0.0)),
        Step(loop(2.0), running=(up("a", 2.0),), sizes={"a": 2}),
        Step(loop(4.0, up("a", 4.0)), sizes={"a": 2}),  # kubetide's loop a moment later, same group
        *(Step(loop(t), sizes={"a": 2}) for t in (6.0, 8.0, 10.0, 12.0, 14.0, 30.0)),
    ]
    state, opened, closed = run(steps)
    assert opened == [] and closed == []
    assert state.done == () and unmatched_scale_ups(state) == {}


def test_a_scale_up_of_another_group_is_one_disagreement_explained_by_the_expander() -> None:
    want_big = up(
        "big", 0.0, size=0, why="2 pending pods (ns/p1, ns/p2) need a new node; expander: priority kept big"
    )
    steps = [
        Step(loop(0.0), running=(), sizes={"small": 0, "big": 0}),
        Step(loop(2.0, want_big), running=(up("small", 2.0, size=0),), sizes={"small": 1, "big": 0}),
        *(Step(loop(t, want_big), sizes={"small": 1, "big": 0}) for t in (4.0, 6.0, 8.0, 10.0)),
        Step(loop(12.0), sizes={"small": 1, "big": 0}),
        Step(loop(14.0), sizes={"small": 1, "big": 0}),
    ]
    state, opened, closed = run(steps)
    (d,) = opened
    assert d.kind == "scale-up-group" and d.subject == "small" and d.at == 2.0
    assert dict(d.delta) == {"small": -1, "big": 1}
    assert d.sentence("CA") == (
        "CA scaled up group small (0 -> 1) at 00:00:02; kubetide would have scaled up group big (0 -> 1) "
        "instead: 2 pending pods (ns/p1, ns/p2) need a new node; expander: priority kept big"
    )
    assert closed == []
    # The running autoscaler's node goes again: the difference is gone.
    state, _, closed = compare(state, Step(loop(40.0), sizes={"small": 0, "big": 0}))
    assert closed == (Closed(d.id, 40.0),) and state.open == {}


def test_while_unmatched_a_running_scale_up_is_taken_back_from_the_shadows_cloud() -> None:
    state, _, _ = run([Step(loop(0.0)), Step(loop(2.0), running=(up("small", 2.0, amount=2),))])
    assert unmatched_scale_ups(state) == {"small": 2}
    assert unmatched_scale_ups(state, [up("big", 3.0)]) == {"small": 2, "big": 1}
    state, _, _ = run([Step(loop(4.0, up("small", 4.0)))], state)
    assert unmatched_scale_ups(state) == {}


def test_a_node_the_running_autoscaler_deleted_is_explained_by_kubetides_last_reason_to_keep_it() -> None:
    kept = {
        "n1": Kept("unneeded since 00:00:00 (4s), not yet for --scale-down-unneeded-time (60s)", until=60.0)
    }
    steps = [
        Step(loop(0.0, kept=kept)),
        Step(loop(4.0, kept=kept)),
        # Tainted by the running autoscaler: the shadow leaves it out of its kept nodes from now on.
        Step(loop(6.0), running=(delete("n1", "g", 6.0),)),
        *(Step(loop(t)) for t in (8.0, 16.0, 30.0)),
    ]
    state, opened, closed = run(steps)
    (d,) = opened
    assert d.kind == "scale-down-running-only" and d.subject == "n1" and dict(d.delta) == {"g": 1}
    assert d.sentence("CA") == (
        "CA deleted node n1 (group g) at 00:00:06; kubetide would have kept it: unneeded since 00:00:00 "
        "(4s), not yet for --scale-down-unneeded-time (60s)"
    )
    assert closed == [] and d.until == 60.0
    _, _, closed = run([Step(loop(59.0)), Step(loop(61.0))], state)
    assert closed == [Closed(d.id, 61.0)]


def test_a_deletion_kubetide_wants_for_long_is_one_record_until_it_stops_wanting_it() -> None:
    want = delete("n1", "g", 0.0, why="empty, unneeded since 00:00:00")
    state, opened, closed = run([Step(loop(float(t), want)) for t in range(0, 100, 2)])
    (d,) = opened
    assert d.kind == "scale-down-kubetide-only" and d.at == 0.0 and dict(d.delta) == {"g": -1}
    assert d.sentence("CA") == (
        "CA kept node n1 (group g); kubetide would have deleted it at 00:00:00: empty, unneeded since 00:00:00"
    )
    assert closed == []
    _, opened, closed = run([Step(loop(100.0))], state)
    assert opened == [] and closed == [Closed(d.id, 100.0)]


def test_a_restarted_shadow_resumes_its_open_records_and_writes_none_twice() -> None:
    want = delete("n1", "g", 0.0, why="empty")
    state, (d,), _ = run([Step(loop(float(t), want)) for t in range(0, 30, 2)])
    restarted = Comparison(W, open={d.key: d})
    state, opened, closed = run([Step(loop(float(t), want)) for t in range(100, 140, 2)], restarted)
    assert opened == [] and closed == []
    _, _, closed = run([Step(loop(140.0))], state)
    assert closed == [Closed(d.id, 140.0)]


def test_kubetide_scaling_up_alone_and_the_running_one_alone() -> None:
    want = up("a", 0.0, why="1 pending pod (ns/p) needs a new node")
    steps = [Step(loop(float(t), want), sizes={"a": 1, "b": 1}) for t in range(0, 14, 2)]
    steps.append(
        Step(
            loop(14.0, idle="its scale-up found NotNeeded"), running=(up("b", 14.0),), sizes={"a": 1, "b": 2}
        )
    )
    steps += [
        Step(loop(float(t), idle="its scale-up found NotNeeded"), sizes={"a": 1, "b": 2})
        for t in range(16, 40, 2)
    ]
    _, opened, closed = run(steps)
    assert [(d.kind, d.subject) for d in opened] == [
        ("scale-up-kubetide-only", "a"),
        ("scale-up-running-only", "b"),
    ]
    assert opened[1].why == "its scale-up found NotNeeded"
    assert closed == [Closed(opened[0].id, 14.0)]


def test_replicas_that_differ_for_a_window_are_one_record() -> None:
    def hpa(at: float, running: int, kubetide: int) -> Step:
        return Step(ShadowLoop(at, replicas={"ns/web": Compared(running, kubetide, "cpu 90% of 50%")}))

    steps = [hpa(0.0, 3, 3), hpa(15.0, 3, 5), hpa(30.0, 3, 5), hpa(45.0, 5, 5), hpa(60.0, 5, 4)]
    _, opened, closed = run(steps)
    (d,) = opened
    assert d.kind == REPLICAS and d.at == 15.0 and dict(d.delta) == {"ns/web": 2}
    assert closed == [Closed(d.id, 45.0)]
    assert d.sentence("the HPA controller").startswith("the HPA controller wanted 3 replicas for ns/web")


# --- properties -------------------------------------------------------------------------------------

GROUPS = ("a", "b", "c")
NODES = ("n1", "n2", "n3", "n4")


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[float, list[Action]]]:
    """Times 2 s apart, each with some scale-ups and deletions."""
    out = []
    deleted: set[str] = set()
    for i in range(draw(st.integers(1, 12))):
        at = 2.0 * i
        actions = [up(g, at) for g in draw(st.lists(st.sampled_from(GROUPS), unique=True, max_size=2))]
        for node in draw(st.lists(st.sampled_from(NODES), unique=True, max_size=1)):
            if node not in deleted:
                deleted.add(node)
                actions.append(delete(node, "a", at))
        out.append((at, actions))
    return out


@settings(max_examples=40, deadline=None)
@given(histories())
def test_a_shadow_that_does_exactly_what_the_running_one_does_never_disagrees(
    history: list[tuple[float, list[Action]]],
) -> None:
    steps = [Step(loop(at, *actions), running=tuple(actions)) for at, actions in history]
    steps += [Step(loop(history[-1][0] + 2.0 * k)) for k in range(1, 12)]
    _, opened, closed = run(steps)
    assert opened == [] and closed == []


@settings(max_examples=40, deadline=None)
@given(histories(), histories(), st.integers(0, 12))
def test_records_open_once_close_once_and_every_unmatched_action_is_reported(
    running: list[tuple[float, list[Action]]], wanted: list[tuple[float, list[Action]]], lag: int
) -> None:
    """Any two histories: every id opens at most once and closes at most once, after it opened; and
    a running action no intent of the same key came near is in a record (alone or paired)."""
    by_time: dict[float, tuple[list[Action], list[Action]]] = {}
    for at, actions in running:
        by_time.setdefault(at, ([], []))[0].extend(actions)
    for at, actions in wanted:
        shifted = at + 2.0 * lag
        by_time.setdefault(shifted, ([], []))[1].extend(
            Action(a.kind, a.subject, a.group, shifted, a.amount, a.size) for a in actions
        )
    end = max(by_time) + 2 * W + 2
    times = sorted({*by_time, *(float(t) for t in range(0, int(end) + 1, 2))})
    steps = [
        Step(loop(t, *by_time.get(t, ([], []))[1]), running=tuple(by_time.get(t, ([], []))[0])) for t in times
    ]
    _, opened, closed = run(steps)
    ids = [d.id for d in opened]
    assert len(ids) == len(set(ids))
    closed_ids = [c.id for c in closed]
    assert len(closed_ids) == len(set(closed_ids)) and set(closed_ids) <= set(ids)
    opened_at = {d.id: d.at for d in opened}
    assert all(c.at >= opened_at[c.id] for c in closed)
    intents = [(a.key, a.at) for _, want in by_time.values() for a in want]
    for _, actions in running:
        for a in actions:
            near = any(key == a.key and abs(t - a.at) <= W for key, t in intents)
            if near:
                continue
            reported = {
                d.subject for d in opened if d.kind.endswith("running-only") or d.kind == "scale-up-group"
            }
            if a.kind == SCALE_UP and any(
                d.kind == "scale-up-kubetide-only" and d.subject == a.subject for d in opened
            ):
                continue
            assert a.subject in reported or any(
                d.kind == "scale-up-group" and d.subject == a.subject for d in opened
            ), (a, opened)
