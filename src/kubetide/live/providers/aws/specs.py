"""Which Auto Scaling groups the provider manages: CA's ``--nodes`` and ``--node-group-auto-discovery``.

``--nodes=MIN:MAX:ASG`` names a group whose bounds come from the flag (kept even if AWS says otherwise);
``--node-group-auto-discovery=asg:tag=KEY[=VALUE],...`` (repeatable) adds every group carrying all the
tags, bounds from the ASG. Parsed as CA's ``dynamic.SpecFromString`` and ``parseASGAutoDiscoverySpec``;
every problem is collected so the command line can name them all at once (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubetide.model.numbers import parse_ascii_int

__all__ = ["AwsConfigError", "ExplicitGroup", "parse_auto_discovery", "parse_nodes"]


class AwsConfigError(ValueError):
    """Bad provider flags; ``errors`` holds ``(flag, problem)`` pairs."""

    def __init__(self, errors: Sequence[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"--{f}: {p}" for f, p in errors))
        self.errors = list(errors)


@dataclass(frozen=True, slots=True)
class ExplicitGroup:
    """A group named on the command line; bounds of None are the ASG's own (Escalator names groups
    without bounds: its node-group file's limits are its own, not the group's)."""

    name: str
    min_size: int | None
    max_size: int | None


def parse_nodes(specs: Sequence[str]) -> tuple[list[ExplicitGroup], list[tuple[str, str]]]:
    groups: list[ExplicitGroup] = []
    problems: list[tuple[str, str]] = []
    for spec in specs:
        parts = spec.split(":")
        if len(parts) != 3 or not parts[2]:
            problems.append(("nodes", f"{spec!r}: must be MIN:MAX:ASG-NAME"))
            continue
        try:
            lo, hi = parse_ascii_int(parts[0]), parse_ascii_int(parts[1])  # Go: ASCII digits
        except ValueError:
            problems.append(("nodes", f"{spec!r}: MIN and MAX must be integers"))
            continue
        if lo < 0:
            problems.append(("nodes", f"{spec!r}: min size must be >= 0"))
        elif hi < lo:
            problems.append(("nodes", f"{spec!r}: max size must be greater or equal to min size"))
        elif hi < 1:
            problems.append(("nodes", f"{spec!r}: max size must be greater or equal to 1"))
        elif any(g.name == parts[2] for g in groups):
            problems.append(("nodes", f"{spec!r}: group {parts[2]} given twice"))
        else:
            groups.append(ExplicitGroup(parts[2], lo, hi))
    return groups, problems


def parse_auto_discovery(specs: Sequence[str]) -> tuple[list[dict[str, str]], list[tuple[str, str]]]:
    """Each spec's tag filter: key -> value ("" matches any value)."""
    result: list[dict[str, str]] = []
    problems: list[tuple[str, str]] = []
    flag = "node-group-auto-discovery"
    for spec in specs:
        kind, sep, rest = spec.partition(":")
        if not sep or kind != "asg":
            problems.append((flag, f"{spec!r}: unsupported discoverer (the aws provider takes asg:tag=...)"))
            continue
        key, sep, value = rest.partition("=")
        if not sep or key != "tag" or not value:
            problems.append((flag, f"{spec!r}: must be asg:tag=KEY[=VALUE],..."))
            continue
        tags: dict[str, str] = {}
        for item in value.split(","):
            k, _, v = item.partition("=")
            if not k:
                problems.append((flag, f"{spec!r}: empty tag key"))
                break
            tags[k] = v
        else:
            result.append(tags)
    return result, problems
