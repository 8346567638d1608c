"""Which of the groups a user named AWS does not have, and which auto-discovery finds nothing.

CA 1.31 keeps a ``--nodes`` group AWS does not list registered, silently, with a target of 0
(``asgCache.regenerate`` never unregisters an explicitly configured ASG), and an auto-discovery whose
tags match nothing simply yields no group. Both are mostly typos or a wrong region, so kubetide says
so: one line when a named group goes missing (and when it appears), one warning naming the tags when a
discovery spec finds no group, and the facts for the start-up check and the status ConfigMap. Each
refresh feeds :meth:`GroupPresence.update`; no call of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["GroupPresence", "MissingGroup", "StartupCheck", "describe_tags"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MissingGroup:
    name: str
    reason: str
    since: float  # when a refresh first found it missing


@dataclass(frozen=True, slots=True)
class StartupCheck:
    """What the first refresh found: ``failure`` (the call's one-line error; "" when it went through),
    the named groups AWS does not have, and the discovery specs that found no group."""

    failure: str = ""
    missing: tuple[MissingGroup, ...] = ()
    empty_discoveries: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failure and not self.missing


def describe_tags(tags: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" if v else k for k, v in sorted(tags.items()))


@dataclass
class GroupPresence:
    region: str
    missing: dict[str, MissingGroup] = field(default_factory=dict)
    empty_discoveries: tuple[str, ...] = ()

    def update(
        self,
        named: Iterable[str],
        found: Iterable[str],
        discovered: Sequence[tuple[Mapping[str, str], int]],
        now: float,
    ) -> None:
        """After a refresh: ``named`` groups, the ``found`` ones, and each discovery spec's count."""
        present = set(found)
        missing: dict[str, MissingGroup] = {}
        for name in sorted(set(named) - present):
            before = self.missing.get(name)
            if before is None:
                reason = (
                    f"ASG {name} does not exist in AWS region {self.region} (DescribeAutoScalingGroups "
                    "does not list it): check the name and the region"
                )
                log.error("%s", reason)
                before = MissingGroup(name, reason, now)
            missing[name] = before
        for name in sorted(set(self.missing) - set(missing)):
            log.info("ASG %s exists now in AWS region %s", name, self.region)
        empty = tuple(describe_tags(tags) for tags, count in discovered if count == 0)
        for tags in empty:
            if tags not in self.empty_discoveries:
                log.warning(
                    "auto-discovery found no ASG in AWS region %s with the tags %s: check the tags and the "
                    "region",
                    self.region,
                    tags,
                )
        self.missing, self.empty_discoveries = missing, empty

    def startup_check(self, failure: str = "") -> StartupCheck:
        return StartupCheck(failure, tuple(self.missing.values()), self.empty_discoveries)
