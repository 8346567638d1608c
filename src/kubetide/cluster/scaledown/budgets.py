"""How many of the removable nodes may start deletion this loop (``CropNodes``, CA spec §7.7).

Deletions in flight use up ``--max-scale-down-parallelism`` (empty + drain) and
``--max-drain-parallelism`` (drain). Atomic (ZeroOrMax) groups go first and whole; one atomic group may
overflow the budget when nothing else was taken, so large slices are not starved. Then empty nodes,
then drain nodes, each grouped by node group in order of first appearance and cut from the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Budget", "GroupNodes", "crop_nodes", "group_nodes"]


@dataclass(frozen=True, slots=True)
class GroupNodes:
    group: str
    nodes: tuple[str, ...]
    atomic: bool = False


@dataclass(frozen=True, slots=True)
class Budget:
    max_scale_down_parallelism: int
    max_drain_parallelism: int
    empty_in_progress: int = 0
    drain_in_progress: int = 0


def group_nodes(
    nodes: Sequence[tuple[str, str]], atomic_groups: frozenset[str] = frozenset()
) -> list[GroupNodes]:
    """(node, group) pairs grouped by group, in order of first appearance."""
    order: dict[str, list[str]] = {}
    for name, group in nodes:
        order.setdefault(group, []).append(name)
    return [GroupNodes(g, tuple(ns), g in atomic_groups) for g, ns in order.items()]


def _crop_atomic(
    groups: list[GroupNodes], budget: int, can_overflow: bool
) -> tuple[list[GroupNodes], int, bool]:
    taken: list[GroupNodes] = []
    remaining = budget
    for g in groups:
        if remaining < len(g.nodes) and (remaining <= 0 or not can_overflow):
            break
        taken.append(g)
        remaining -= len(g.nodes)
        can_overflow = False
    return taken, budget - remaining, can_overflow


def _crop_individual(groups: list[GroupNodes], budget: int) -> tuple[list[GroupNodes], int]:
    taken: list[GroupNodes] = []
    remaining = budget
    for g in groups:
        if remaining < 1:
            break
        nodes = g.nodes[:remaining]
        taken.append(GroupNodes(g.group, nodes, g.atomic))
        remaining -= len(nodes)
    return taken, budget - remaining


def crop_nodes(
    empty: list[GroupNodes], drain: list[GroupNodes], budget: Budget
) -> tuple[list[GroupNodes], list[GroupNodes]]:
    """The empty and drain nodes to delete now, per group."""
    parallelism = budget.max_scale_down_parallelism - budget.empty_in_progress - budget.drain_in_progress
    drain_budget = budget.max_drain_parallelism - budget.drain_in_progress

    empty_atomic, used, can_overflow = _crop_atomic([g for g in empty if g.atomic], parallelism, True)
    parallelism -= used
    drain_budget = min(parallelism, drain_budget)
    drain_atomic, used, _ = _crop_atomic([g for g in drain if g.atomic], drain_budget, can_overflow)
    parallelism -= used
    drain_budget -= used

    empty_regular, used = _crop_individual([g for g in empty if not g.atomic], parallelism)
    parallelism -= used
    drain_budget = min(parallelism, drain_budget)
    drain_regular, _ = _crop_individual([g for g in drain if not g.atomic], drain_budget)
    return empty_atomic + empty_regular, drain_atomic + drain_regular
