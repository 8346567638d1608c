"""In which order scale-down tries its candidates (CA 1.31's ``ScaleDownCandidatesSortingProcessor``,
on by default with ``--parallel-drain``).

Upstream sorts the candidates (nodes of groups above their min size, in the node list's order, those
being deleted still among them) with ``sort.Sort``: empty nodes first (``EmptySorting``: no pod
blocks and none has to move, judged with no listers and no PDBs), then, in each part, the nodes that
were unneeded after the last planner update (``PreviousCandidates``). The order of the removal
simulation follows, and with it which node spends a shared PDB disruption or a destination's room
first. ``sort.Sort`` is not stable: ties come out as Go leaves them (:mod:`kubetide.cluster.gosort`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from kubetide.cluster.gosort import go_sort_permutation
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import DrainContext, DrainOptions, is_empty, timeless

__all__ = ["CandidateOrder"]


class CandidateOrder:
    """The sort, with each node's emptiness kept from one loop to the next while its pods are the
    same version and no rule reads the time for them."""

    def __init__(self) -> None:
        self._empty: dict[str, tuple[int, DrainOptions, bool]] = {}

    def sort(
        self,
        nodes: Sequence[NodeView],
        pods: Mapping[str, Sequence[Pod]],
        versions: Mapping[str, int],
        previous: Collection[str],
        ctx: DrainContext,
    ) -> list[NodeView]:
        """``nodes`` as upstream's sorting processor orders them; ``previous``: the nodes unneeded
        after the last planner update; ``ctx``: the drain rules' options (PDBs and controllers are
        not looked at)."""
        if len(nodes) <= 1:
            return list(nodes)
        ctx = DrainContext(ctx.now, ctx.options)
        keys = [
            (0 if self._is_empty(n.name, pods.get(n.name, ()), versions.get(n.name), ctx) else 2)
            + (0 if n.name in previous else 1)
            for n in nodes
        ]
        return [nodes[i] for i in go_sort_permutation(keys)]

    def _is_empty(self, name: str, pods: Sequence[Pod], version: int | None, ctx: DrainContext) -> bool:
        if not pods:
            return True
        kept = self._empty.get(name)
        if kept is not None and kept[0] == version and (kept[1] is ctx.options or kept[1] == ctx.options):
            return kept[2]
        empty = is_empty(pods, ctx)
        if version is not None and timeless(pods):
            self._empty[name] = (version, ctx.options, empty)
        else:
            self._empty.pop(name, None)
        return empty

    def keep_only(self, names: Collection[str]) -> None:
        """Forget nodes that are gone (called once a loop with the nodes present)."""
        if len(self._empty) > len(names):
            self._empty = {name: kept for name, kept in self._empty.items() if name in names}
