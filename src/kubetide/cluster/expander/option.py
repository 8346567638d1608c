"""What an expander chooses among: one expansion option per node group, and the filter protocol.

An option says "add ``node_count`` nodes to ``group`` and these pods will fit". Filters keep the best
options by their own measure; the chain (:mod:`.chain`) runs them in the ``--expander`` order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kubetide.cluster.clusterstate.registry import ClusterEvent
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["ExpanderStep", "ExpansionContext", "Filter", "Option"]


@dataclass(frozen=True, slots=True)
class Option:
    """``expander.Option``: ``template`` is the group's template node (None if it has none)."""

    group: str
    node_count: int
    pods: tuple[Pod, ...] = ()
    template: NodeView | None = None
    exists: bool = True
    similar_groups: tuple[str, ...] = ()
    debug: str = ""


@dataclass(frozen=True, slots=True)
class ExpanderStep:
    """One filter of the chain, for ``kubetide explain``: the groups it kept and, per group it was given,
    how it rated it (a score, "no template", ...), when the filter rates."""

    name: str
    kept: tuple[str, ...]
    scores: tuple[tuple[str, str], ...] = ()


@dataclass
class ExpansionContext:
    """What filters may read besides the options; ``events`` collects the warnings they raise."""

    now: float = 0.0
    cluster_node_count: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    events: list[ClusterEvent] = field(default_factory=list)
    # Each filter the chain ran, in order, with what it kept and why (for ``kubetide explain``).
    trace: list[ExpanderStep] = field(default_factory=list)
    # The ratings of the filter running now: filters call :meth:`rate` as they score an option.
    ratings: dict[str, str] = field(default_factory=dict)

    def rate(self, group: str, how: str) -> None:
        self.ratings[group] = how


class Filter(Protocol):
    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        """The subset of ``options`` this strategy considers best (possibly empty)."""
        ...
