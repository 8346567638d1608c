"""``priority``: keep the options whose node group matches the highest user-given priority.

The ConfigMap ``cluster-autoscaler-priority-expander`` (key ``priorities``) maps integer priorities to
lists of regexes, re-read on every call. Regexes are unanchored (a partial match of the group id
counts). A missing, empty or invalid configuration, or no option matching anything, leaves the
options unchanged, with CA's warning events. The running maximum starts at -1, as upstream, so
priorities below -1 never win.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetide.cluster.clusterstate.registry import ClusterEvent
from kubetide.cluster.expander.option import ExpansionContext, Option
from kubetide.cluster.reasons import EventReason
from kubetide.model import yamldoc

__all__ = ["CONFIG_MAP_KEY", "CONFIG_MAP_NAME", "PriorityConfigError", "PriorityFilter", "parse_priorities"]

CONFIG_MAP_NAME = "cluster-autoscaler-priority-expander"
CONFIG_MAP_KEY = "priorities"
Priorities = dict[int, list[re.Pattern[str]]]


class PriorityConfigError(ValueError):
    """The priorities text is empty or invalid; the message is CA's."""


def parse_priorities(text: str) -> Priorities:
    if text == "":
        raise PriorityConfigError(
            f"priority configuration in {CONFIG_MAP_NAME} configmap is empty; please provide valid configuration"
        )
    try:
        raw: Any = yamldoc.load_documents(text, "priorities")[0]
    except yamldoc.YamlDocumentError as exc:
        raise PriorityConfigError(f"Can't parse YAML with priorities in the configmap: {exc}") from None
    if not isinstance(raw, dict) or not all(isinstance(v, list) for v in raw.values()):
        raise PriorityConfigError("Can't parse YAML with priorities in the configmap: not a map of lists")
    out: Priorities = {}
    for prio, rules in raw.items():
        try:
            key = int(prio)
        except (TypeError, ValueError):
            raise PriorityConfigError(
                f"Can't parse YAML with priorities in the configmap: bad key {prio!r}"
            ) from None
        for rule in rules:
            try:
                out.setdefault(key, []).append(re.compile(str(rule)))
            except re.error as exc:
                raise PriorityConfigError(
                    f"Can't compile regexp rule for priority {key} and rule {rule}: {exc}"
                ) from None
    return out


def _warn(ctx: ExpansionContext, reason: EventReason, message: str) -> None:
    ctx.events.append(ClusterEvent("Warning", reason, message, CONFIG_MAP_NAME))


@dataclass(frozen=True, slots=True)
class PriorityFilter:
    """``config_map`` returns the ConfigMap's data, or None when it does not exist."""

    config_map: Callable[[], Mapping[str, str] | None]

    def _load(self, ctx: ExpansionContext) -> Priorities | None:
        data = self.config_map()
        if data is None:
            return None
        if CONFIG_MAP_KEY not in data:
            _warn(
                ctx,
                EventReason.PRIORITY_CONFIG_MAP_INVALID,
                f"Wrong configmap for priority expander, doesn't contain {CONFIG_MAP_KEY} key. Ignoring update.",
            )
            return None
        try:
            return parse_priorities(data[CONFIG_MAP_KEY])
        except PriorityConfigError as exc:
            _warn(
                ctx,
                EventReason.PRIORITY_CONFIG_MAP_INVALID,
                f"Wrong configuration for priority expander: {exc}. Ignoring update.",
            )
            return None

    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        if not options:
            return []
        priorities = self._load(ctx)
        if priorities is None:
            return list(options)
        best: list[Option] = []
        max_prio = -1
        for o in options:
            matched = [p for p, rules in priorities.items() if any(r.search(o.group) for r in rules)]
            ctx.rate(o.group, f"priority {max(matched)}" if matched else "no priority rule matches")
            if not matched:
                # Upstream's warning depends on Go map order when several priorities exist; here it is
                # raised exactly for groups no rule matches.
                _warn(
                    ctx,
                    EventReason.PRIORITY_CONFIG_MAP_NOT_MATCHED_GROUP,
                    f"Priority expander: node group {o.group} not found in priority expander configuration. "
                    "The group won't be used.",
                )
                continue
            prio = max(matched)
            if prio < max_prio:
                continue
            if prio > max_prio:
                max_prio, best = prio, []
            best.append(o)
        if not best:
            _warn(
                ctx,
                EventReason.PRIORITY_CONFIG_MAP_NO_GROUP_MATCHED,
                "Priority expander: no priorities info found for any of the expansion options. No options filtered.",
            )
            return list(options)
        return best
