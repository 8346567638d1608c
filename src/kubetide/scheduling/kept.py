"""A loop's snapshot of the nodes and their pods, kept from one loop to the next.

Cluster Autoscaler builds its snapshot from the informers' caches every loop: 30,000 pods bound one
by one for a change of a few dozen. :class:`SnapshotKeeper` gives each loop a snapshot equal to
``ClusterSnapshot(nodes, pods)`` built afresh (property-tested), from the last one: when the nodes are
the same ones in the same order (a node's new view with the same allocatable replaces the old one in
its slot), only nodes whose pods are not the very same objects in the same order are bound again
(a node given the very sequence object of last time is not even compared); otherwise, or when most
nodes' pods changed (a fresh build binds all pods in one vectorized step), it builds afresh.
Everything the loop does to the snapshot happens inside a copy fork that the next call reverts, so
the kept part is always the plain nodes-and-pods state.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from itertools import compress
from typing import TypeVar

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["SnapshotKeeper"]

_T = TypeVar("_T")


class SnapshotKeeper:
    def __init__(self) -> None:
        self._snap: ClusterSnapshot | None = None
        self._nodes: list[NodeView] = []
        self._given: list[Sequence[Pod]] = []  # the sequences the kept snapshot's pods came from
        self._min_priority: int | None = None
        self.rebuilt = 0  # snapshots built afresh (the others were kept and updated)

    def snapshot(
        self,
        nodes: Sequence[NodeView],
        pods_by_node: Sequence[Sequence[Pod]],
        min_priority: int | None = None,
    ) -> ClusterSnapshot:
        """The snapshot of ``nodes`` with ``pods_by_node[i]`` bound to ``nodes[i]`` in that order (with
        ``min_priority``, only the pods of at least that priority), inside a fork (the caller may
        change it freely: the next call undoes it). The snapshot returned last time must not be used
        after this call, and the sequences given must not change while they are kept."""
        snap = self._snap
        if snap is not None and snap.fork_depth == 1 and min_priority == self._min_priority:
            snap.revert()
            if self._update(snap, nodes, pods_by_node):
                snap.fork(copy=True)
                return snap
        self.rebuilt += 1
        snap = ClusterSnapshot.from_pods_by_node(nodes, pods_by_node, min_priority)
        self._snap, self._nodes, self._given = snap, list(nodes), list(pods_by_node)
        self._min_priority = min_priority
        snap.fork(copy=True)
        return snap

    def _update(
        self, snap: ClusterSnapshot, nodes: Sequence[NodeView], pods_by_node: Sequence[Sequence[Pod]]
    ) -> bool:
        """Bring the kept snapshot to ``nodes`` and their pods; False when it cannot (other nodes)."""
        kept = self._nodes
        if snap.num_slots != len(kept):
            return False
        if len(nodes) != len(kept) and not self._drop_gone(snap, nodes):
            return False
        kept = self._nodes
        # Most nodes and pod sequences are the very objects of last time: the others are found in C.
        new_views = list(compress(range(len(nodes)), map(operator.is_not, nodes, kept)))
        for i in new_views:
            node, old = nodes[i], kept[i]
            if node.name != old.name or node.allocatable != old.allocatable:
                return False
        given, low = self._given, self._min_priority
        changed = []
        for i in compress(range(len(pods_by_node)), map(operator.is_not, pods_by_node, given)):
            # Not the very sequence its pods were bound from. The very pods in the same order are
            # those bound (each passed the priority filter when bound, and a pod's priority is its
            # own): no filtering needed, the usual case of a world rebuilt around unchanged pods.
            given_pods, on = pods_by_node[i], snap.pods_on(i)
            if len(on) == len(given_pods) and not any(map(operator.is_not, on, given_pods)):
                continue
            pods = _bound(given_pods, low)
            if len(on) != len(pods) or any(map(operator.is_not, on, pods)):
                changed.append(i)
        if len(changed) > len(nodes) // 4 + 1:
            return False  # binding pod by pod would cost more than a fresh build's one vectorized step
        for i in new_views:
            snap.replace_node(i, nodes[i])
            kept[i] = nodes[i]
        for i in changed:
            _rebind(snap, i, _bound(pods_by_node[i], low))
        self._given = list(pods_by_node)
        if snap.unused_classes() > len(snap.classes) // 2 + 16:
            # Taint values come and go (CA's soft taint carries a time): forget the old classes now
            # and then (a renumbering makes the removal memo start afresh, so not every loop).
            snap.drop_unused_classes()
        return True

    def _drop_gone(self, snap: ClusterSnapshot, nodes: Sequence[NodeView]) -> bool:
        """Drop the slots of nodes that are gone when ``nodes`` are the kept ones less some (a node
        deleted), keeping every other slot's pods; False (nothing changed) otherwise."""
        keep = _kept_positions(self._nodes, nodes, _same_name)
        if keep is None:
            return False
        snap.keep_slots(keep)
        self._nodes = [self._nodes[i] for i in keep]
        self._given = [self._given[i] for i in keep]
        return True


def _kept_positions(old: Sequence[_T], new: Sequence[_T], same: Callable[[_T, _T], bool]) -> list[int] | None:
    """The positions in ``old`` of the items ``new`` lists, when ``new`` is ``old`` less some, in the
    same order (``same`` tells an item of one from its match in the other); else None."""
    keep: list[int] = []
    k = 0
    for position, item in enumerate(old):
        if k < len(new) and same(new[k], item):
            keep.append(position)
            k += 1
    return keep if k == len(new) else None


def _same_name(a: NodeView, b: NodeView) -> bool:
    return a.name == b.name


def _rebind(snap: ClusterSnapshot, i: int, pods: Sequence[Pod]) -> None:
    """Make slot ``i``'s pods ``pods``, in that order: by binding the new ones when the old ones are
    their start, by unbinding the gone ones when ``pods`` are the old ones less some, else afresh."""
    old = snap.pods_on(i)
    n = len(old)
    if len(pods) > n and not any(map(operator.is_not, old, pods[:n])):
        snap.add_pods_in_order(pods[n:], i)
        return
    if len(pods) < n:
        keep = _kept_positions(old, pods, operator.is_)
        if keep is not None:
            kept = set(keep)
            for pod in [p for position, p in enumerate(old) if position not in kept]:
                snap.remove_pod(pod, i)
            return
    snap.take_pods(i)
    snap.add_pods_in_order(pods, i)


def _bound(pods: Sequence[Pod], min_priority: int | None) -> Sequence[Pod]:
    if min_priority is None:
        return pods
    return [p for p in pods if not (p.priority < min_priority)]
