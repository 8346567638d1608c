"""The Events of a dry run: written (they are how users read its decisions), but an action's text says
what *would* have been done. The loop words an action as done ("size set to 3") although the dry run,
which the gate (:mod:`.gate`) keeps from writing, changed nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kubetide.kube.events import EventRecorder
from kubetide.live.guard.gate import WriteGate

__all__ = ["DryRunEventRecorder", "dry_run_message", "recorder_type"]


# CA's action texts, as the loop words them once done, and how a dry run words them.
_WOULD: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(r"^Scale-up: (?:setting group (\S+) size to|group (\S+) size set to) (.*)$"),
        lambda m: f"Scale-up (dry run): would set group {m[1] or m[2]} size to {m[3]}",
    ),
    (
        re.compile(r"^pod triggered scale-up: (.*)$"),
        lambda m: f"pod would trigger scale-up (dry run): {m[1]}",
    ),
    (re.compile(r"^Scale-down: removing (.*)$"), lambda m: f"Scale-down (dry run): would remove {m[1]}"),
    (
        re.compile(r"^marked the node as (.*)$"),
        lambda m: f"dry run: would mark the node as {m[1]} (nothing was changed)",
    ),
    (re.compile(r"^deleting pod (.*)$"), lambda m: f"dry run: would delete pod {m[1]}"),
    (re.compile(r"^nodes? removed (.*)$"), lambda m: f"dry run: node would be removed {m[1]}"),
    (re.compile(r"^Removed (.*)$"), lambda m: f"dry run: would remove {m[1]}"),
    (re.compile(r"^Decreased (.*)$"), lambda m: f"dry run: would decrease {m[1]}"),
    (re.compile(r"^New size: (\d+); (.*)$"), lambda m: f"dry run: would set new size {m[1]}; {m[2]}"),
)
# Events that report an action taken (CA's reasons and kubetide's own).
_ACTIONS = frozenset(
    {
        "ScaledUpGroup",
        "TriggeredScaleUp",
        "ScaleDown",
        "ScaleDownEmpty",
        "DeleteUnregistered",
        "DeleteCreatedWithError",
        "FixNodeGroupSize",
        "SuccessfulRescale",  # the HPA's
    }
)


def dry_run_message(reason: str, message: str) -> str:
    """An action Event's text as a dry run must say it: "would ..."; other Events unchanged."""
    if reason not in _ACTIONS:
        return message
    for pattern, word in _WOULD:
        match = pattern.match(message)
        if match is not None:
            return word(match)
    return f"dry run, nothing was changed: {message}"


class DryRunEventRecorder(EventRecorder):
    """The Events of a dry-run component, action texts in the conditional."""

    def emit(self, type_: str, reason: str, obj: str, message: str) -> None:
        super().emit(type_, reason, obj, dry_run_message(reason, message))


def recorder_type(gate: WriteGate) -> type[EventRecorder]:
    """The Event recorder of the component ``gate`` guards: the dry run's wording in a dry run."""
    return DryRunEventRecorder if gate.dry_run else EventRecorder
