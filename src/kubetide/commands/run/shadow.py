"""The flags of shadow mode, which every ``kubetide run`` component takes, and their checks.

``--shadow`` runs the component beside the autoscaler the cluster already has: it decides every loop,
acts on nothing (its connection refuses every write: :mod:`kubetide.live.guard.readonly`), and records
where it disagrees (:mod:`kubetide.live.shadow`) in ``--shadow-dir``. A shadow takes no Lease (a Lease
is a write), so ``--leader-elect`` cannot be asked for; nor can ``--dry-run`` (a dry run acts through
ports that only say what they would write; a shadow does not even ask them) or ``--once`` (a
comparison needs time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubetide.cluster.flags import FlagSpec
from kubetide.commands.run.settings import ParsedLine
from kubetide.live.guard import WriteGate
from kubetide.live.shadow.journal import Journal, JournalError

__all__ = ["ShadowSettings", "shadow_flags", "shadow_problems", "shadow_provider_gate", "shadow_settings"]


def _positive(value: Any) -> str | None:
    return "must be > 0" if value <= 0 else None


def shadow_flags() -> list[FlagSpec]:
    return [
        FlagSpec(
            "shadow",
            "bool",
            False,
            "run beside the autoscaler the cluster has: decide every loop, change nothing (every write "
            "refused), record where the two disagree in --shadow-dir",
        ),
        FlagSpec(
            "shadow-dir",
            "string",
            "",
            "the shadow's records: disagreements.jsonl and timeline.jsonl, appended and synced, resumed "
            "after a restart (`kubetide shadow report DIR` draws them)",
        ),
        FlagSpec(
            "shadow-events",
            "bool",
            False,
            "also post each disagreement as an Event on its object (needs events create in the RBAC)",
        ),
        FlagSpec(
            "shadow-match-window",
            "duration",
            30.0,
            "an action of the running autoscaler and kubetide's of the same kind on the same object "
            "agree if they are at most this far apart; at least the loop period",
            check=_positive,
        ),
    ]


@dataclass(frozen=True, slots=True)
class ShadowSettings:
    directory: Path
    events: bool
    window: float


def shadow_problems(
    parsed: ParsedLine, *, period_flag: str, period: float, leader_flag: str = "leader-elect"
) -> list[tuple[str, str]]:
    """What is wrong with the shadow flags of ``parsed`` (none when neither is given)."""
    v, given = parsed.values, parsed.given
    if not v["shadow"]:
        return [
            (name, "only used with --shadow")
            for name in ("shadow-dir", "shadow-events", "shadow-match-window")
            if name in given
        ]
    problems: list[tuple[str, str]] = []
    if not v["shadow-dir"]:
        problems.append(("shadow-dir", "required with --shadow: the directory of the shadow's records"))
    else:
        try:
            Journal(Path(str(v["shadow-dir"])))
        except JournalError as exc:
            problems.append(("shadow-dir", str(exc)))
    if v["dry-run"]:
        problems.append(("dry-run", "not with --shadow: a shadow changes nothing already"))
    if v["once"]:
        problems.append(
            ("once", "not with --shadow: a shadow compares over time (run it as long as you like)")
        )
    if leader_flag in given and v[leader_flag]:
        problems.append((leader_flag, "not with --shadow: a shadow takes no Lease (a Lease is a write)"))
    window = float(v["shadow-match-window"])
    if 0 < window < period:
        problems.append(
            ("shadow-match-window", f"must be at least --{period_flag} ({period:g}s), got {window:g}s")
        )
    return problems


def shadow_settings(values: Mapping[str, Any]) -> ShadowSettings | None:
    if not values["shadow"]:
        return None
    return ShadowSettings(
        Path(str(values["shadow-dir"])), bool(values["shadow-events"]), float(values["shadow-match-window"])
    )


def shadow_provider_gate(component: str) -> WriteGate:
    """The gate of a shadow's kwok provider: what its ``refresh()`` would write by itself (the state
    corrected, the running autoscaler's creations falling due) is left to the autoscaler that acts,
    said at debug level and not made, so the refresh goes on reading. (The shadow's connection refuses
    such a write anyway; its ports' gate refuses theirs outright.)"""
    return WriteGate(component, lambda: True, dry_run=True)
