"""Where a shadow disagrees with the autoscaler that acts: a pure function of what the running one did
(:class:`Action`, from the cluster) and what kubetide decided (:class:`ShadowLoop`), step after step.

Two autoscalers looking at one cluster never act at the same instant, so actions are matched within
a window ``W`` (``--shadow-match-window``): the running autoscaler's action at ``t`` agrees with
kubetide's intent of the same kind on the same subject (a scale-up of the same group, the deletion
of the same node, the same scale-down) if kubetide had it at some loop in ``[t - W, t + W]``. What is
still unmatched once its window has passed is a :class:`Disagreement`:

- ``scale-up-group``: both scaled up, different groups (the expanders differ);
- ``scale-up-running-only`` / ``scale-up-kubetide-only``: one side scaled up, the other did not;
- ``scale-down-running-only``: the running autoscaler removed a node (or lowered a group) kubetide
  would have kept, with kubetide's reason for keeping it (its last loop before the removal);
- ``scale-down-kubetide-only``: kubetide would have removed it; the running autoscaler kept it;
- ``replicas``: an HPA's desired replicas differ for longer than the window.

Each disagreement is an episode: it opens once, with the difference in nodes per group (or replicas)
it makes to kubetide's timeline (``delta``), and closes when that difference is gone (the nodes the
running autoscaler added are gone again, kubetide stops wanting what it wanted, kubetide's own timer
would have removed the node it kept). A kubetide intent that lasts for hours is one record, not one
per loop. :class:`Comparison` holds the state between steps; it is rebuilt from the open records
after a restart (``Comparison(open=...)``), so a restarted shadow records nothing twice.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

__all__ = [
    "DELETE",
    "REPLICAS",
    "SCALE_DOWN",
    "SCALE_UP",
    "Action",
    "Closed",
    "Compared",
    "Comparison",
    "Disagreement",
    "Kept",
    "ShadowLoop",
    "Step",
    "clock_text",
    "compare",
    "unmatched_scale_ups",
]

SCALE_UP = "scale-up"  # subject: the group; amount: nodes added
DELETE = "delete"  # subject: the node; group: its group
SCALE_DOWN = "scale-down"  # subject: the group; amount: nodes removed (no node named)
REPLICAS = "replicas"  # subject: the HPA


def clock_text(at: float) -> str:
    """``14:02:05`` (UTC): the time of day in a record's sentence (the record keeps the full time)."""
    return time.strftime("%H:%M:%S", time.gmtime(at))


@dataclass(frozen=True, slots=True)
class Action:
    """One action, made by the running autoscaler or intended by kubetide. ``size``: the group's target
    before the action (scale-ups and scale-downs; -1 when unknown)."""

    kind: str
    subject: str
    group: str
    at: float
    amount: int = 1
    size: int = -1
    why: str = ""  # kubetide's reasons for an intent
    pods: tuple[str, ...] = ()  # a running scale-up: the pods it was for, as its Events say

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.subject)

    def scaled_up(self) -> str:
        """``scaled up group G (0 -> 1) at 14:02:05 for pod ns/p``: a running scale-up, in words."""
        said = f"scaled up group {self.subject} ({_size_text(self, 1)}) at {clock_text(self.at)}"
        if not self.pods:
            return said
        return f"{said} for pod{'s' if len(self.pods) > 1 else ''} {', '.join(self.pods)}"


@dataclass(frozen=True, slots=True)
class Kept:
    """Why kubetide keeps a node, and (``until``) when its own timer would remove it, if it knows."""

    why: str
    until: float | None = None


@dataclass(frozen=True, slots=True)
class Compared:
    """An HPA's desired replicas on both sides at a sync, and kubetide's reasons. ``running_at``: when
    the running controller rescaled to its count (its ``SuccessfulRescale`` Event), with its reason;
    ``kubetide_at``: when kubetide's count last changed (None: unknown, or never)."""

    running: int
    kubetide: int
    why: str = ""
    running_at: float | None = None
    running_reason: str = ""
    kubetide_at: float | None = None

    def since(self, now: float) -> float:
        """When the two counts began to differ, as far as is known: the later of the running rescale
        and kubetide's last change (never after now); now when the running rescale's time is unknown."""
        if self.running_at is None:
            return now
        latest = self.running_at if self.kubetide_at is None else max(self.running_at, self.kubetide_at)
        return min(latest, now)


@dataclass(frozen=True, slots=True)
class ShadowLoop:
    """What kubetide decided at ``at``: its intents, why it keeps each node it does not remove (nodes
    being deleted left out; Escalator's shadow keeps whole groups, by group), and, when it would scale
    nothing up, why (``idle``)."""

    at: float
    intents: tuple[Action, ...] = ()
    kept: Mapping[str, Kept] = field(default_factory=dict)
    idle: str = ""
    replicas: Mapping[str, Compared] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Step:
    """One look: what the running autoscaler did since the last (``running``), what kubetide decided
    now, and the running autoscaler's sizes now (group targets)."""

    shadow: ShadowLoop
    running: tuple[Action, ...] = ()
    sizes: Mapping[str, int] = field(default_factory=dict)

    @property
    def at(self) -> float:
        return self.shadow.at


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One episode of disagreement. ``running`` and ``kubetide`` say what each did or would have done,
    ``why`` kubetide's reasons; ``delta``: kubetide's nodes per group (an HPA's replicas) minus the
    running autoscaler's while it lasts. ``close_when``: what ends it (see :func:`compare`)."""

    kind: str
    subject: str
    at: float
    running: str
    kubetide: str
    why: str
    delta: Mapping[str, int]
    group: str = ""
    until: float | None = None  # it ends by then at the latest (kubetide's own timer)
    size: int = -1  # the running group's target before its action (a scale-up: ends back at it)

    @property
    def id(self) -> str:
        return f"{self.kind}/{self.subject}/{self.at:.3f}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.subject)

    def sentence(self, running_name: str) -> str:
        """``CA deleted node N at 14:02:05; kubetide would have kept it: pod P has no other place``."""
        said = f"{running_name} {self.running}; kubetide {self.kubetide}"
        return f"{said}: {self.why}" if self.why else said


@dataclass(frozen=True, slots=True)
class Closed:
    id: str
    at: float


@dataclass(frozen=True, slots=True)
class _Intent:
    action: Action  # as first intended
    first: float
    last: float
    active: bool = True
    matched: bool = False


@dataclass(frozen=True, slots=True)
class _Done:
    action: Action
    context: str  # kubetide's reason at the time (kept node, or why it scaled nothing up)
    until: float | None = None
    matched: bool = False


@dataclass(frozen=True)
class Comparison:
    """The state between steps: the window, the open disagreements (by key), what is not matched yet."""

    window: float
    open: Mapping[tuple[str, str], Disagreement] = field(default_factory=dict)
    intents: Mapping[tuple[str, str], _Intent] = field(default_factory=dict)
    done: tuple[_Done, ...] = ()
    # Why kubetide kept each node at its last loop that saw it (and when): a removal observed later
    # is explained by it.
    kept: Mapping[str, tuple[Kept, float]] = field(default_factory=dict)
    differing: Mapping[str, tuple[float, Compared]] = field(default_factory=dict)


def compare(state: Comparison, step: Step) -> tuple[Comparison, tuple[Disagreement, ...], tuple[Closed, ...]]:
    """The next state, the disagreements that open and those that close at ``step``."""
    now, w = step.at, state.window
    kept_before = {n: k for n, (k, _) in state.kept.items()}
    done = [*state.done]
    for action in step.running:
        context, until = _context(action, kept_before, step.shadow)
        done.append(_Done(action, context, until))
    removed = {a.subject for a in step.running if a.kind == DELETE}
    kept = {n: ks for n, ks in state.kept.items() if n not in removed and ks[1] + w > now}
    kept.update((n, (k, now)) for n, k in step.shadow.kept.items())
    intents = _intents(state.intents, step.shadow, now)
    done, intents = _match(done, intents, w)
    opened: list[Disagreement] = []
    open_ = dict(state.open)
    done, intents = _settle(done, intents, open_, opened, now, w)
    differing, replicas_opened = _replicas(state.differing, step.shadow, open_, now, w)
    opened += replicas_opened
    for d in opened:
        open_[d.key] = d
    closed = _close(open_, step, now)
    # Forget what can match nothing any more.
    done = [d for d in done if not d.matched and d.action.at + w > now]
    intents = {
        k: i
        for k, i in intents.items()
        if (i.active or i.last + w > now) and not (i.matched and not i.active)
    }
    return (
        Comparison(w, open_, intents, tuple(done), kept, differing),
        tuple(opened),
        tuple(closed),
    )


def _context(action: Action, kept: Mapping[str, Kept], shadow: ShadowLoop) -> tuple[str, float | None]:
    if action.kind == DELETE:
        reason = kept.get(action.subject)
        if reason is None:
            return "no loop of kubetide's had looked at the node yet", None
        return reason.why, reason.until
    # A group kubetide left alone (Escalator's shadow keeps groups, with its decision's reasons): at
    # its last loop before the action, else at the loop that sees it.
    group = kept.get(action.subject) or shadow.kept.get(action.subject)
    if action.kind == SCALE_UP:
        return shadow.idle or (group.why if group is not None else ""), None
    return (group.why if group is not None else ""), None


def _intents(
    before: Mapping[tuple[str, str], _Intent], shadow: ShadowLoop, now: float
) -> dict[tuple[str, str], _Intent]:
    out: dict[tuple[str, str], _Intent] = {}
    wanted = {a.key: a for a in shadow.intents}
    for key, intent in before.items():
        if key not in wanted:
            out[key] = replace(intent, active=False)
    for key, action in wanted.items():
        old = before.get(key)
        if old is not None and old.active:
            out[key] = replace(old, last=now)
        else:  # new, or wanted again after a pause: a new episode
            out[key] = _Intent(action, now, now)
    return out


def _match(
    done: list[_Done], intents: dict[tuple[str, str], _Intent], w: float
) -> tuple[list[_Done], dict[tuple[str, str], _Intent]]:
    """Each running action with kubetide's intent of the same key within the window: both agree (one
    intent may cover several actions: a group scaled up twice while kubetide wanted it)."""
    out: list[_Done] = []
    for d in done:
        intent = intents.get(d.action.key)
        if not d.matched and intent is not None and intent.first - w <= d.action.at <= intent.last + w:
            intents[d.action.key] = replace(intent, matched=True)
            d = replace(d, matched=True)
        out.append(d)
    return out, intents


def _settle(
    done: list[_Done],
    intents: dict[tuple[str, str], _Intent],
    open_: dict[tuple[str, str], Disagreement],
    opened: list[Disagreement],
    now: float,
    w: float,
) -> tuple[list[_Done], dict[tuple[str, str], _Intent]]:
    """What stayed unmatched for a whole window: each a disagreement (scale-ups of different groups
    within one window paired as one)."""
    settled: list[_Done] = []
    for d in done:
        if d.matched or d.action.at + w > now:
            settled.append(d)
            continue
        other = _other_scale_up(d.action, intents, w) if d.action.kind == SCALE_UP else None
        if other is not None:
            intents[other.action.key] = replace(other, matched=True)
            opened.append(_swapped(d, other))
        elif (_RUNNING_ONLY[d.action.kind], d.action.subject) not in open_:
            opened.append(_running_only(d))
        settled.append(replace(d, matched=True))
    for key, intent in list(intents.items()):
        # An intent that ended within its window and was never matched is still one: kubetide would
        # have acted once (Escalator's dry mode decides a scale-down once, then waits on it).
        if intent.matched or intent.first + w > now:
            continue
        if (_KUBETIDE_ONLY[intent.action.kind], intent.action.subject) in open_:
            intents[key] = replace(intent, matched=True)  # recorded before a restart: the same episode
            continue
        paired = _running_scale_up_for(intent, settled, w) if intent.action.kind == SCALE_UP else None
        if paired is not None:
            settled = [replace(d, matched=True) if d is paired else d for d in settled]
            opened.append(_swapped(paired, intent))
        else:
            opened.append(_kubetide_only(intent))
        intents[key] = replace(intent, matched=True)
    return settled, intents


_RUNNING_ONLY = {
    SCALE_UP: "scale-up-running-only",
    DELETE: "scale-down-running-only",
    SCALE_DOWN: "scale-down-running-only",
}
_KUBETIDE_ONLY = {
    SCALE_UP: "scale-up-kubetide-only",
    DELETE: "scale-down-kubetide-only",
    SCALE_DOWN: "scale-down-kubetide-only",
}


def _other_scale_up(action: Action, intents: Mapping[tuple[str, str], _Intent], w: float) -> _Intent | None:
    candidates = [
        i
        for i in intents.values()
        if i.action.kind == SCALE_UP
        and i.action.subject != action.subject
        and not i.matched
        and i.first - w <= action.at <= i.last + w
    ]
    return min(candidates, key=lambda i: (i.first, i.action.subject), default=None)


def _running_scale_up_for(intent: _Intent, done: Iterable[_Done], w: float) -> _Done | None:
    candidates = [
        d
        for d in done
        if d.action.kind == SCALE_UP
        and not d.matched
        and d.action.subject != intent.action.subject
        and intent.first - w <= d.action.at <= intent.last + w
    ]
    return min(candidates, key=lambda d: (d.action.at, d.action.subject), default=None)


def _size_text(action: Action, sign: int) -> str:
    if action.size < 0:
        return f"{'+' if sign > 0 else '-'}{action.amount}"
    return f"{action.size} -> {action.size + sign * action.amount}"


def _swapped(d: _Done, intent: _Intent) -> Disagreement:
    ran, want = d.action, intent.action
    return Disagreement(
        kind="scale-up-group",
        subject=ran.subject,
        at=ran.at,
        running=ran.scaled_up(),
        kubetide=f"would have scaled up group {want.subject} ({_size_text(want, 1)}) instead",
        why=want.why,
        delta={ran.subject: -ran.amount, want.subject: want.amount},
        group=ran.subject,
        size=ran.size,
    )


def _running_only(d: _Done) -> Disagreement:
    a = d.action
    if a.kind == SCALE_UP:
        return Disagreement(
            kind="scale-up-running-only",
            subject=a.subject,
            at=a.at,
            running=a.scaled_up(),
            kubetide="would not have scaled up",
            why=d.context,
            delta={a.subject: -a.amount},
            group=a.subject,
            size=a.size,
        )
    if a.kind == DELETE:
        return Disagreement(
            kind="scale-down-running-only",
            subject=a.subject,
            at=a.at,
            running=f"deleted node {a.subject} (group {a.group}) at {clock_text(a.at)}",
            kubetide="would have kept it",
            why=d.context,
            delta={a.group: 1},
            group=a.group,
            until=d.until,
        )
    return Disagreement(
        kind="scale-down-running-only",
        subject=a.subject,
        at=a.at,
        running=f"scaled down group {a.subject} ({_size_text(a, -1)}) at {clock_text(a.at)}",
        kubetide="would not have scaled it down",
        why=d.context,
        delta={a.subject: a.amount},
        group=a.subject,
    )


def _kubetide_only(intent: _Intent) -> Disagreement:
    a, at = intent.action, intent.first
    if a.kind == SCALE_UP:
        return Disagreement(
            kind="scale-up-kubetide-only",
            subject=a.subject,
            at=at,
            running="did not scale up",
            kubetide=f"would have scaled up group {a.subject} ({_size_text(a, 1)}) at {clock_text(at)}",
            why=a.why,
            delta={a.subject: a.amount},
            group=a.subject,
        )
    if a.kind == DELETE:
        return Disagreement(
            kind="scale-down-kubetide-only",
            subject=a.subject,
            at=at,
            running=f"kept node {a.subject} (group {a.group})",
            kubetide=f"would have deleted it at {clock_text(at)}",
            why=a.why,
            delta={a.group: -1},
            group=a.group,
        )
    return Disagreement(
        kind="scale-down-kubetide-only",
        subject=a.subject,
        at=at,
        running=f"did not scale down group {a.subject}",
        kubetide=f"would have scaled it down ({_size_text(a, -1)}) at {clock_text(at)}",
        why=a.why,
        delta={a.subject: -a.amount},
        group=a.subject,
    )


def _replicas(
    before: Mapping[str, tuple[float, Compared]],
    shadow: ShadowLoop,
    open_: Mapping[tuple[str, str], Disagreement],
    now: float,
    w: float,
) -> tuple[dict[str, tuple[float, Compared]], list[Disagreement]]:
    """HPAs whose desired replicas differ: since when; a disagreement once they have for a window."""
    differing: dict[str, tuple[float, Compared]] = {}
    opened: list[Disagreement] = []
    for key, c in shadow.replicas.items():
        if c.running == c.kubetide:
            continue
        since = before[key][0] if key in before else c.since(now)
        differing[key] = (since, c)
        if since + w <= now and (REPLICAS, key) not in open_:
            if c.running_at is not None:
                said = f"rescaled {key} to {c.running} at {clock_text(c.running_at)}"
                running = f"{said} ({c.running_reason})" if c.running_reason else said
            else:
                running = f"wanted {c.running} replicas for {key} (since {clock_text(since)} or before)"
            mine = "" if c.kubetide_at is None else f", its own count since {clock_text(c.kubetide_at)}"
            opened.append(
                Disagreement(
                    kind=REPLICAS,
                    subject=key,
                    at=since,
                    running=running,
                    kubetide=f"would have had {c.kubetide}{mine}",
                    why=c.why,
                    delta={key: c.kubetide - c.running},
                    group=key,
                )
            )
    return differing, opened


def _close(open_: dict[tuple[str, str], Disagreement], step: Step, now: float) -> list[Closed]:
    """The open disagreements whose difference is gone at ``step``."""
    closed: list[Closed] = []
    wanted = {a.key for a in step.shadow.intents}
    for key, d in list(open_.items()):
        if d.at >= now:
            continue  # opened at this very step
        if _ended(d, wanted, step, now):
            closed.append(Closed(d.id, now))
            del open_[key]
    return closed


def _ended(d: Disagreement, wanted: set[tuple[str, str]], step: Step, now: float) -> bool:
    kind = d.kind
    if kind in ("scale-up-running-only", "scale-up-group"):
        # The running autoscaler's extra nodes are gone again, or kubetide now wants them too.
        size = step.sizes.get(d.group)
        back = size is not None and d.size >= 0 and size <= d.size
        return back or (SCALE_UP, d.group) in wanted
    if kind == "scale-up-kubetide-only":
        return (SCALE_UP, d.subject) not in wanted
    if kind == "scale-down-kubetide-only":
        return (DELETE, d.subject) not in wanted and (SCALE_DOWN, d.subject) not in wanted
    if kind == "scale-down-running-only":
        # kubetide's own timer would have removed the node by now, or kubetide now removes one too.
        timer_ran_out = d.until is not None and now >= d.until
        removes_too = any(a.group == d.group for a in step.shadow.intents if a.kind in (DELETE, SCALE_DOWN))
        return timer_ran_out or removes_too
    if kind == REPLICAS:
        c = step.shadow.replicas.get(d.subject)
        return c is None or c.running == c.kubetide
    return False


def unmatched_scale_ups(state: Comparison, running: Iterable[Action] = ()) -> dict[str, int]:
    """The nodes of the running autoscaler's scale-ups that kubetide has not matched yet, by group
    (``running``: those observed just now, not in ``state`` yet): what the shadow's cloud takes back
    (:mod:`kubetide.live.shadow.counterfactual`)."""
    out: dict[str, int] = {}
    for action in [*(d.action for d in state.done if not d.matched), *running]:
        if action.kind == SCALE_UP:
            out[action.subject] = out.get(action.subject, 0) + action.amount
    return out
