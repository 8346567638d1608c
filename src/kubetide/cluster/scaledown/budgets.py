"""How many of the removable nodes may start deletion this loop (CA 1.31's ``CropNodes``,
core/scaledown/budgets/budgets.go; CA spec §7.7).

Deletions in flight use up ``--max-scale-down-parallelism`` (empty + drain) and
``--max-drain-parallelism`` (drain). Atomic (ZeroOrMax) groups go first and whole: an atomic group's
empty nodes together with its drain nodes, then atomic groups with drain nodes only. A group that does
not fit stops the atomic pass, unless nothing has been taken yet (one atomic group may overflow the
budget, so large slices are not starved) and the budget it would need is not already 0; a group whose
nodes are not its whole target size is skipped. Then regular empty nodes, then regular drain nodes,
each grouped by node group in order of first appearance and cut from the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

__all__ = ["Budget", "GroupNodes", "crop_nodes", "group_nodes"]


@dataclass(frozen=True, slots=True)
class GroupNodes:
    group: str
    nodes: tuple[str, ...]
    atomic: bool = False
    batch_size: int = 0  # an atomic group's target size: its nodes are deleted as one batch


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


def _crop_individual(
    taken: list[GroupNodes], groups: list[GroupNodes], budget: int
) -> tuple[list[GroupNodes], int]:
    """``cropIndividualNodes``: the groups' nodes up to ``budget``, and how many were taken."""
    remaining = budget
    for g in groups:
        if remaining < 1:
            break
        if remaining < len(g.nodes):
            g = replace(g, nodes=g.nodes[:remaining])
        taken.append(g)
        remaining -= len(g.nodes)
    return taken, budget - remaining


def crop_nodes(
    empty: list[GroupNodes],
    drain: list[GroupNodes],
    budget: Budget,
    targets: Mapping[str, int] | None = None,
) -> tuple[list[GroupNodes], list[GroupNodes]]:
    """The empty and drain nodes to delete now, per group. ``targets``: each atomic group's target size
    (an atomic group missing from it is skipped, as upstream skips one whose size cannot be read)."""
    targets = targets or {}
    empty_regular = [g for g in empty if not g.atomic]
    drain_regular = [g for g in drain if not g.atomic]
    empty_atomic = [g for g in empty if g.atomic]
    drain_atomic = [g for g in drain if g.atomic]
    drain_atomic_of = {g.group: g for g in drain_atomic}
    empty_atomic_groups = {g.group for g in empty_atomic}

    parallelism = budget.max_scale_down_parallelism - budget.empty_in_progress - budget.drain_in_progress
    drain_budget = budget.max_drain_parallelism - budget.drain_in_progress
    can_overflow = True
    empty_out: list[GroupNodes] = []
    drain_out: list[GroupNodes] = []
    for g in empty_atomic:
        with_drain = drain_atomic_of.get(g.group)
        drained = len(with_drain.nodes) if with_drain is not None else 0
        over = parallelism < len(g.nodes) + drained or drain_budget < drained
        # One atomic group may go over the budget when nothing was taken before it.
        if over and (parallelism == 0 or (drained > 0 and drain_budget == 0) or not can_overflow):
            break
        target = targets.get(g.group)
        if target is None or len(g.nodes) + drained != target:
            continue  # an atomic group is never scaled down in part
        empty_out.append(replace(g, batch_size=target))
        if with_drain is not None:
            drain_out.append(replace(with_drain, batch_size=target))
        parallelism -= len(g.nodes) + drained
        drain_budget -= drained
        can_overflow = False

    drain_budget = min(parallelism, drain_budget)
    for g in drain_atomic:
        if g.group in empty_atomic_groups:
            continue  # taken (or not) with its empty nodes above
        if drain_budget < len(g.nodes) and (drain_budget == 0 or not can_overflow):
            break
        target = targets.get(g.group)
        if target is None or len(g.nodes) != target:
            continue
        drain_out.append(replace(g, batch_size=target))
        parallelism -= len(g.nodes)
        drain_budget -= len(g.nodes)
        can_overflow = False

    empty_out, used = _crop_individual(empty_out, empty_regular, parallelism)
    parallelism -= used
    drain_budget = min(parallelism, drain_budget)
    drain_out, _ = _crop_individual(drain_out, drain_regular, drain_budget)
    return empty_out, drain_out
