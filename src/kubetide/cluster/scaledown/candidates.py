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
from kubetide.scheduling.drainability import is_empty

__all__ = ["CandidateOrder"]


class CandidateOrder:
    """The sort, with each node's emptiness kept from one loop to the next while its pods are the same
    version (a snapshot's ``pods_version``) and none is being deleted (then the time matters)."""

    def __init__(self) -> None:
        self._part: dict[str, tuple[int, int]] = {}  # name -> (pods version, 0 if empty else 2)
        self._last: tuple[list[int], list[int]] = ([], [])  # the last keys and their order

    def sort(
        self,
        nodes: Sequence[NodeView],
        pods: Mapping[str, Sequence[Pod]],
        versions: Mapping[str, int],
        previous: Collection[str],
        now: float,
    ) -> list[NodeView]:
        """``nodes`` as upstream's sorting processor orders them; ``pods`` and ``versions``: each
        node's pods in the snapshot and their version; ``previous``: the nodes unneeded after the
        last planner update."""
        if len(nodes) <= 1:
            return list(nodes)
        kept = self._part
        kept_get, version_of = kept.get, versions.get
        keys = []
        for n in nodes:  # a steady loop: every node's part kept (this runs for every node)
            name = n.name
            hit = kept_get(name)
            if hit is None or hit[0] != version_of(name):
                hit = self._judge(name, pods.get(name, ()), version_of(name), now)
            keys.append(hit[1] + (name not in previous))
        if len(kept) > 2 * len(nodes):  # forget nodes that are gone
            listed = {n.name for n in nodes}
            self._part = {name: hit for name, hit in kept.items() if name in listed}
        last_keys, last_order = self._last
        if keys != last_keys:
            last_order = go_sort_permutation(keys)
            self._last = (keys, last_order)
        return [nodes[i] for i in last_order]

    def _judge(self, name: str, pods: Sequence[Pod], version: int | None, now: float) -> tuple[int, int]:
        hit = (-1, 0 if is_empty(pods, now) else 2)
        if version is not None and all(p.deletion_time is None for p in pods):
            hit = (version, hit[1])
            self._part[name] = hit
        else:
            self._part.pop(name, None)  # being deleted: the answer depends on the time
        return hit
