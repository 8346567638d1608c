"""The cluster as the scheduling simulation sees it: nodes, the pods bound to them, free resources.

What-if questions (would these pods fit on N new template nodes? can this node's pods move elsewhere?)
are answered by mutating the snapshot inside :meth:`ClusterSnapshot.fork` and then calling
:meth:`revert` or :meth:`commit`. Forking costs nothing: every mutation appends its inverse to an undo
log, so a revert touches only what changed (nodes added inside the fork are simply truncated away); a
fork expected to change much can instead copy the state and restore the copy.

Resources are columnar (``nodes x resources`` int64 arrays for allocatable and requested; ``pods`` is a
column too) so filters can compare one request vector against every node at once. Nodes that share
labels (apart from the hostname), taints and ``unschedulable`` share a *node class*; static filters are
evaluated once per class. Node copies made from a template (Cluster Autoscaler's ``<template>-e-<i>``
nodes) keep the template's view and get their own name and hostname label.

Once an inter-pod filter asks for it, the snapshot keeps a :class:`~kubetide.scheduling.pod_index.PodIndex`
(its bound pods by label class and topology domain) in step: every bind, unbind and node change,
undo and revert included, is told to it; a copy fork saves it and its revert restores it.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from kubetide.model.node import HOSTNAME_LABEL, NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources
from kubetide.model.scheduling_terms import Taint

if TYPE_CHECKING:
    from kubetide.scheduling.pod_index import IndexState, PodIndex

__all__ = ["BASE_RESOURCES", "ClusterSnapshot", "NodeClass"]

BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
_PODS_COL = 3
_ANTI = operator.attrgetter("pod_anti_affinity")
_INT64_MAX = 2**63 - 1

Int64Array = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class NodeClass:
    """What static filters read from a node, apart from its name and hostname label."""

    labels: frozenset[tuple[str, str]]
    taints: tuple[Taint, ...]
    unschedulable: bool

    @property
    def label_map(self) -> dict[str, str]:
        return dict(self.labels)


# Slot versions come from one counter for every snapshot: a version names one pod list's content.
_versions = itertools.count(1)


@dataclass(slots=True)
class _Saved:
    """The per-node state a ``fork(copy=True)`` restores on revert."""

    used: Int64Array
    active: NDArray[np.bool_]
    classes: NDArray[np.int32]
    anti: Int64Array
    pods: list[list[Pod]]
    versions: list[int]
    views: list[NodeView]
    own_view: list[bool]
    constrained: int
    index: tuple[PodIndex, IndexState] | None  # the pod index as it was, if there was one


def _unbound_since(index: PodIndex, i: int, now: list[Pod], then: list[Pod]) -> Sequence[Pod]:
    """Tell ``index`` that slot ``i``'s pods go from ``now`` back to ``then``, as far as unbinding goes:
    when one list is the other with pods appended (binds, or unbinds from the end, since), only those;
    otherwise all of ``now``. Returns the pods to bind back (``then`` itself when all were unbound)."""
    k = min(len(now), len(then))
    if all(map(operator.is_, now[:k], then[:k])):
        index.pods_removed(i, now[k:])
        return then[k:]
    index.pods_removed(i, now)
    return then


class ClusterSnapshot:
    """Nodes (by slot index), their pods and free resources, with an undo log for forks."""

    def __init__(self, nodes: Iterable[NodeView] = (), pods: Iterable[Pod] = ()) -> None:
        self.resources: list[str] = list(BASE_RESOURCES)
        self._res_index = {r: i for i, r in enumerate(self.resources)}
        self._cap = 16
        self._n = 0
        self._alloc: Int64Array = np.zeros((self._cap, len(self.resources)), np.int64)
        self._used: Int64Array = np.zeros((self._cap, len(self.resources)), np.int64)
        self._active = np.zeros(self._cap, np.bool_)
        self._class = np.zeros(self._cap, np.int32)
        self._anti = np.zeros(self._cap, np.int64)  # bound pods with required anti-affinity, per slot
        self._names: list[str] = []
        self._views: list[NodeView] = []
        self._own_view: list[bool] = []  # False for template copies whose view must be renamed
        self._pods: list[list[Pod]] = []
        # Copy forks share the pod lists (copy on write): once a fork saved them, a slot's list is
        # copied before its first change since, and ``_owned`` holds the slots copied so.
        self._shared = False
        self._owned: set[int] = set()
        # Per slot, the version of its pod list: a new one (never seen before, in any snapshot) at
        # every change, the old one when a copy fork's revert restores the old list. Equal
        # versions: the very same pods in the same order (caches key on it).
        self._ver: list[int] = []
        self._index: dict[str, int] = {}
        self.classes: list[NodeClass] = []
        self._class_index: dict[NodeClass, int] = {}
        self._log: list[tuple[Any, ...]] = []
        self._marks: list[tuple[int, int, _Saved | None]] = []
        self.node_epoch = 0  # changes whenever the node set changes (caches key on it)
        self.pods_epoch = 0  # changes whenever any pod is bound or unbound
        self.constrained_pods = 0  # bound pods with required anti-affinity (they constrain others)
        # Bound pods by label class and topology domain, for inter-pod filters: built on first use,
        # then told of every change (None: nobody asked yet, or dropped by a renumbering).
        self._pod_index: PodIndex | None = None
        self._add_nodes(nodes)
        self._bind_initial(pods)

    @classmethod
    def from_pods_by_node(
        cls, nodes: Sequence[NodeView], pods_by_node: Sequence[Sequence[Pod]], min_priority: int | None = None
    ) -> ClusterSnapshot:
        """``ClusterSnapshot(nodes, pods)`` where ``pods_by_node[i]`` are the pods bound to ``nodes[i]``,
        in that order (with ``min_priority``, only those of at least that priority): a cold loop's
        snapshot of every running pod, each pod read once and no pod's node looked up by name."""
        snap = cls(nodes)
        snap._bind_by_node(pods_by_node, -math.inf if min_priority is None else min_priority)
        return snap

    def _bind_initial(self, pods: Iterable[Pod]) -> None:
        """Bind the starting pods in one vectorized step: a loop builds a snapshot of every running pod,
        so this is the hot path of a cold loop (no per-pod numpy call)."""
        rows = _RequestRows()
        row_of, known = rows.row_of, rows.by_id
        slots: list[int] = []
        per_pod: list[int] = []
        anti: list[int] = []  # the slot of every pod with required anti-affinity
        index, bound = self._index, self._pods
        for pod in pods:
            slot = index[pod.node_name]
            bound[slot].append(pod)
            slots.append(slot)
            req = pod.requests
            hit = known.get(id(req))
            per_pod.append(hit[0] if hit is not None else row_of(req))
            if pod.pod_anti_affinity:
                anti.append(slot)
        if slots:
            order = np.argsort(np.asarray(slots, np.intp), kind="stable")
            sorted_slots = np.asarray(slots, np.intp)[order]
            self._add_rows(sorted_slots, rows, np.asarray(per_pod, np.intp)[order], anti)

    def _bind_by_node(self, pods_by_node: Sequence[Sequence[Pod]], low: float) -> None:
        """Bind ``pods_by_node[i]`` (those of priority ``low`` or more) to slot ``i``, slots 0 on."""
        rows = _RequestRows()
        row_of, known = rows.row_of, rows.by_id
        per_pod: list[int] = []
        ends: list[int] = []  # per slot, how many pods were bound up to and including it
        anti: list[int] = []
        for slot, (bound, pods) in enumerate(zip(self._pods, pods_by_node, strict=True)):
            append = bound.append
            for pod in pods:
                if pod.priority < low:
                    continue
                append(pod)
                req = pod.requests
                hit = known.get(id(req))
                per_pod.append(hit[0] if hit is not None else row_of(req))
                if pod.pod_anti_affinity:
                    anti.append(slot)
            ends.append(len(per_pod))
        if per_pod:
            bounds = np.asarray([0, *ends], np.intp)
            counts = bounds[1:] - bounds[:-1]
            slots = np.repeat(np.arange(len(ends), dtype=np.intp), counts)
            self._add_rows(slots, rows, np.asarray(per_pod, np.intp), anti)

    def _add_rows(
        self, slots: NDArray[np.intp], rows: _RequestRows, per_pod: NDArray[np.intp], anti: list[int]
    ) -> None:
        """Add ``rows``' request ``per_pod[k]`` to slot ``slots[k]`` (ascending) for every bound pod, and
        count the pods with anti-affinity (``anti``: their slots)."""
        for req in rows.requests:  # columns first: a new resource name widens the arrays
            for name in req:
                self.column(name)
        matrix = np.stack([self.vector(req) for req in rows.requests])
        starts = np.flatnonzero(np.diff(slots, prepend=-1))  # where each slot's pods begin
        # int64 sums wrap as the per-pod additions they replace would (the order does not matter).
        self._used[slots[starts]] += np.add.reduceat(matrix[per_pod], starts, axis=0)
        if anti:
            self._anti[: self._n] += np.bincount(np.asarray(anti, np.intp), minlength=self._n)
            self.constrained_pods += len(anti)
        self.pods_epoch += 1

    # ----------------------------------------------------------------- reading
    @property
    def num_slots(self) -> int:
        """Slots in use, including removed nodes (their ``active`` flag is False)."""
        return self._n

    @property
    def active(self) -> NDArray[np.bool_]:
        return self._active[: self._n]

    @property
    def allocatable(self) -> Int64Array:
        return self._alloc[: self._n]

    @property
    def requested(self) -> Int64Array:
        return self._used[: self._n]

    @property
    def node_class_ids(self) -> NDArray[np.int32]:
        return self._class[: self._n]

    def free(self) -> Int64Array:
        return self._alloc[: self._n] - self._used[: self._n]

    def active_indices(self) -> NDArray[np.intp]:
        return np.flatnonzero(self._active[: self._n])

    def num_active(self) -> int:
        return int(self._active[: self._n].sum())

    @property
    def slot_names(self) -> list[str]:
        """Every slot's node name, by slot (removed nodes included); read-only."""
        return self._names

    def index_of(self, name: str) -> int:
        return self._index[name]

    @property
    def slot_index(self) -> Mapping[str, int]:
        """Every slot by its node's name (removed nodes included); read-only. For lookups of every
        node at once (``map(slot_index.__getitem__, names)``) without a call per node."""
        return self._index

    def has_node(self, name: str) -> bool:
        i = self._index.get(name)
        return i is not None and bool(self._active[i])

    def slots_of(self, names: Iterable[str]) -> NDArray[np.intp]:
        """The slots of those of ``names`` that are nodes present, in ``names``' order."""
        found = list(map(self._index.get, names))  # in C: the loop passes every node's name
        try:
            slots = np.array(found, np.intp)
        except TypeError:  # some names are no node's (None)
            slots = np.array([i for i in found if i is not None], np.intp)
        return slots[self._active[slots]]

    def name(self, i: int) -> str:
        return self._names[i]

    def node(self, i: int) -> NodeView:
        """The node's view; a template copy is renamed (and relabelled) on first access."""
        if not self._own_view[i]:
            view = self._views[i]
            labels = {**view.labels, HOSTNAME_LABEL: self._names[i]}
            self._views[i] = replace(view, name=self._names[i], labels=labels)
            self._own_view[i] = True
        return self._views[i]

    def labels(self, i: int) -> dict[str, str]:
        return self.node(i).labels

    def label_value(self, i: int, key: str) -> str | None:
        """Label ``key`` of slot ``i``'s node (None: none), without renaming a template copy."""
        if key == HOSTNAME_LABEL and not self._own_view[i]:
            return self._names[i]
        return self._views[i].labels.get(key)

    def pod_index(self) -> PodIndex:
        """The bound pods by label class and topology domain (built on first use, then kept in step)."""
        index = self._pod_index
        if index is None:
            from kubetide.scheduling.pod_index import PodIndex

            index = self._pod_index = PodIndex(self)
        return index

    def pods_on(self, i: int) -> Sequence[Pod]:
        return self._pods[i]

    def pods_now(self) -> Sequence[Sequence[Pod]]:
        """Every slot's pods as they are now, in O(slots): the lists become shared (a later change to
        a slot copies its list first), so they stay as they are whatever the snapshot does next."""
        return self._share()

    def pods_versions(self) -> Sequence[int]:
        """Every slot's :meth:`pods_version`, by slot, as they are now."""
        return self._ver[: self._n]

    def pods_version(self, i: int) -> int:
        """The version of slot ``i``'s pods: equal versions (of any snapshot) mean the very same pods
        in the same order."""
        return self._ver[i]

    def reuse_version(self, i: int, version: int, pods: Sequence[Pod]) -> bool:
        """Give slot ``i`` back ``version`` when its pods are ``pods`` (the very objects, in the same
        order) and ``version`` was theirs: the same pods bound again (a CapacityBuffer's fake pods,
        every loop) keep what is kept by version. False (nothing changed) when they are not."""
        mine = self._pods[i]
        if len(mine) != len(pods) or not all(map(operator.is_, mine, pods)):
            return False
        self._ver[i] = version
        return True

    def all_pods(self) -> Iterable[tuple[int, Pod]]:
        for i in range(self._n):
            if self._active[i]:
                for pod in self._pods[i]:
                    yield i, pod

    def column(self, resource: str) -> int:
        """The column of ``resource``, adding an all-zero column the first time a name is seen."""
        col = self._res_index.get(resource)
        if col is None:
            col = len(self.resources)
            self.resources.append(resource)
            self._res_index[resource] = col
            pad = np.zeros((self._cap, 1), np.int64)
            self._alloc = np.hstack([self._alloc, pad])
            self._used = np.hstack([self._used, pad.copy()])
        return col

    def vector(self, requests: Resources, pods: int = 1) -> Int64Array:
        """A request as a row over the snapshot's columns; ``pods`` counts against the pod limit."""
        cols = [self.column(r) for r in requests]  # may widen the arrays, so before allocating
        vec = np.zeros(len(self.resources), np.int64)
        for r, c in zip(requests, cols, strict=True):
            vec[c] = requests[r]
        vec[_PODS_COL] = pods
        return vec

    # ----------------------------------------------------------------- forks
    @property
    def fork_depth(self) -> int:
        """How many forks are open."""
        return len(self._marks)

    def fork(self, *, copy: bool = False) -> None:
        """Start a what-if; nest freely. End it with :meth:`revert` or :meth:`commit`.

        ``copy``: for a what-if that will change much (moving the pods of hundreds of nodes): the
        state is copied now (O(nodes + pods)) and a revert restores the copy, instead of undoing
        thousands of logged changes one by one."""
        self._marks.append((len(self._log), self._n, self._save() if copy else None))

    def commit(self) -> None:
        """Keep the changes of the innermost fork (they stay revertible by an outer fork)."""
        self._marks.pop()
        if not self._marks:
            self._log.clear()
        elif self._marks[-1][2] is not None:
            # The enclosing fork reverts by restoring its copy: it needs no log (and the entries kept
            # alive would only lengthen the garbage collector's full passes).
            del self._log[self._marks[-1][0] :]

    def revert(self) -> None:
        """Undo every change since the innermost :meth:`fork`."""
        log_len, n_keep, saved = self._marks.pop()
        if saved is not None:
            del self._log[log_len:]
            if self._n > n_keep:
                self._truncate(n_keep)
            self._restore(saved)
            return
        while len(self._log) > log_len:
            self._undo(self._log.pop(), n_keep)
        if self._n > n_keep:
            self._truncate(n_keep)

    def _save(self) -> _Saved:
        n = self._n
        return _Saved(
            self._used[:n].copy(),
            self._active[:n].copy(),
            self._class[:n].copy(),
            self._anti[:n].copy(),
            self._share(),
            self._ver[:n],
            list(self._views),
            list(self._own_view),
            self.constrained_pods,
            None if self._pod_index is None else (self._pod_index, self._pod_index.save()),
        )

    def _share(self) -> list[list[Pod]]:
        """The pod lists for a saved copy, shared with the state from now on."""
        self._shared = True
        self._owned = set()
        return list(self._pods)

    def _own(self, i: int) -> list[Pod]:
        """Slot ``i``'s pod list, to change (so it gets a new version): a copy first if a saved
        state may share it."""
        self._ver[i] = next(_versions)
        pods = self._pods[i]
        if self._shared and i not in self._owned:
            pods = self._pods[i] = list(pods)
            self._owned.add(i)
        return pods

    def _restore(self, saved: _Saved) -> None:
        n = len(saved.pods)
        index = self._pod_index
        if saved.index is not None and saved.index[0] is index:
            index = None  # restored wholesale below
        if index is not None:  # made since the save: tell it of the slots whose pods or node change
            pods_changed = list(compress(range(n), map(operator.ne, self._ver, saved.versions)))
            regained = [_unbound_since(index, i, self._pods[i], saved.pods[i]) for i in pods_changed]
            relabelled = (self._active[:n] != saved.active) | (self._class[:n] != saved.classes)
            nodes_changed = set(np.flatnonzero(relabelled).tolist())
            nodes_changed.update(compress(range(n), map(operator.is_not, self._views, saved.views)))
        self._owned = set()  # the restored lists may be shared with an outer fork's copy
        self._used[:n] = self._width(saved.used)
        self._active[:n], self._class[:n], self._anti[:n] = saved.active, saved.classes, saved.anti
        self._pods[:n], self._views[:n], self._own_view[:n] = saved.pods, saved.views, saved.own_view
        self._ver[:n] = saved.versions
        self.constrained_pods = saved.constrained
        self.node_epoch += 1
        self.pods_epoch += 1
        if index is not None:
            # The index counts each slot's pods but those still to bind back: they move with the labels.
            counted = {
                i: len(self._pods[i]) - len(back) for i, back in zip(pods_changed, regained, strict=True)
            }
            for i in sorted(nodes_changed):
                pods = self._pods[i]
                index.node_changed(i, pods[: counted.get(i, len(pods))])
            for i, back in zip(pods_changed, regained, strict=True):
                index.pods_added(i, back)
        elif saved.index is not None and saved.index[0] is self._pod_index:
            saved.index[0].restore(saved.index[1])

    def _record(self, entry: tuple[Any, ...]) -> None:
        if self._marks:
            self._log.append(entry)

    def _width(self, row: Int64Array) -> Int64Array:
        """A logged row, padded with zeros for resource columns added after it was logged."""
        missing = len(self.resources) - row.shape[-1]
        return np.pad(row, [(0, 0)] * (row.ndim - 1) + [(0, missing)]) if missing else row

    def _unbind_last(
        self, slots: NDArray[np.intp], counts: NDArray[np.int64], totals: Int64Array, n_keep: int
    ) -> None:
        """Undo a bind of ``counts[k]`` pods requesting ``totals[k]`` to ``slots[k]`` (the last pods of
        each slot); slots at or past ``n_keep`` are truncated away."""
        index = self._pod_index
        kept = slots < n_keep
        for slot, count in zip(slots[kept].tolist(), counts[kept].tolist(), strict=True):
            pods = self._own(slot)
            if index is not None:
                index.pods_removed(slot, pods[len(pods) - count :])
            del pods[len(pods) - count :]
        self._used[slots[kept]] -= totals[kept]
        self.pods_epoch += 1

    def _undo(self, entry: tuple[Any, ...], n_keep: int) -> None:
        op, i = entry[0], entry[1]
        index = self._pod_index
        if op == "each+":
            vec = self._width(entry[2])
            for slot in entry[1]:
                if slot < n_keep:  # slots at or past n_keep are truncated away
                    popped = self._own(slot).pop()
                    self._used[slot] -= vec
                    if index is not None:
                        index.pods_removed(slot, (popped,))
            self.pods_epoch += 1
            return
        if op == "blocks+":
            self._unbind_last(entry[1], entry[2], self._width(entry[3]), n_keep)
            return
        if op == "rows+":
            slots, rows = entry[1], self._width(entry[2])
            kept = slots < n_keep  # slots at or past n_keep are truncated away
            for slot in slots[kept].tolist():
                popped = self._own(slot).pop()
                if index is not None:
                    index.pods_removed(slot, (popped,))
            self._used[slots[kept]] -= rows[kept]
            self.pods_epoch += 1
            return
        if op == "bulk+":
            slots, counts = entry[1], entry[2]
            self._unbind_last(slots, counts, counts[:, None] * self._width(entry[3]), n_keep)
            return
        if i >= n_keep and op != "node-":
            return  # the node itself is truncated away
        if op == "clear":
            if index is not None:
                index.pods_added(i, entry[2])
            self._pods[i] = entry[2]
            self._ver[i] = next(_versions)
            self._owned.discard(i)  # the list taken may be shared with a fork's copy
            self._used[i] = self._width(entry[3])
            self._anti[i] = entry[4]
            self.constrained_pods += entry[4]
            self.pods_epoch += 1
        elif op == "pods+":
            count, total = entry[2], self._width(entry[3])
            pods = self._own(i)
            if index is not None:
                index.pods_removed(i, pods[len(pods) - count :])
            del pods[len(pods) - count :]
            self._used[i] -= total
            self._anti[i] -= entry[4]
            self.constrained_pods -= entry[4]
            self.pods_epoch += 1
        elif op == "pod-":
            pod, pos, vec = entry[2], entry[3], self._width(entry[4])
            self._own(i).insert(pos, pod)
            if index is not None:
                index.pods_added(i, (pod,))
            self._used[i] += vec
            self._anti[i] += bool(pod.pod_anti_affinity)
            self.constrained_pods += bool(pod.pod_anti_affinity)
            self.pods_epoch += 1
        elif op == "node-":
            self._active[i] = True
            self.node_epoch += 1
            if index is not None:
                index.node_changed(i, ())
        elif op == "view":
            self._views[i], self._own_view[i], self._class[i] = entry[2], entry[3], entry[4]
            self.node_epoch += 1
            if index is not None:
                index.node_changed(i, self._pods[i])

    def _truncate(self, n: int) -> None:
        if self._pod_index is not None:
            self._pod_index.truncating(n)
        for name in self._names[n:]:
            del self._index[name]
        self.constrained_pods -= int(self._anti[n : self._n].sum())
        self._anti[n : self._n] = 0
        del self._names[n:], self._views[n:], self._own_view[n:], self._pods[n:], self._ver[n:]
        self._active[n : self._n] = False
        self._used[n : self._n] = 0
        self._n = n
        self.node_epoch += 1
        self.pods_epoch += 1

    # ----------------------------------------------------------------- nodes
    def keep_slots(self, keep: Sequence[int]) -> None:
        """Keep only the slots ``keep`` (ascending), renumbered 0, 1, ... in that order, with their
        nodes, pods and pods' versions: the snapshot of a cluster that lost some nodes, without
        binding every pod again. Outside any fork only."""
        if self._marks:
            raise RuntimeError("keep_slots inside a fork")
        idx = np.asarray(keep, np.intp)
        k = len(keep)
        for attr in ("_alloc", "_used", "_active", "_class", "_anti"):
            old = getattr(self, attr)
            new = np.zeros_like(old)
            new[:k] = old[idx]
            setattr(self, attr, new)
        self._names = [self._names[i] for i in keep]
        self._views = [self._views[i] for i in keep]
        self._own_view = [self._own_view[i] for i in keep]
        self._pods = [self._pods[i] for i in keep]
        self._ver = [self._ver[i] for i in keep]
        self._index = {name: i for i, name in enumerate(self._names)}
        self._n = k
        self._owned = set()  # slots were renumbered: any list may be shared, copy before changing
        self._pod_index = None  # built again on first use, with the new numbers
        self.constrained_pods = int(self._anti[:k].sum())
        self._log.clear()
        self.node_epoch += 1
        self.pods_epoch += 1

    def drop_unused_classes(self) -> None:
        """Number the node classes in the order the slots first use them, as a fresh build does,
        forgetting those no slot uses: a kept snapshot collects one per taint value its nodes ever
        had. Outside any fork only."""
        if self._marks:
            raise RuntimeError("drop_unused_classes inside a fork")
        n = self._n
        ids, first = np.unique(self._class[:n], return_index=True)
        order = ids[np.argsort(first)]
        renumber = np.zeros(len(self.classes), np.int32)
        renumber[order] = np.arange(len(order), dtype=np.int32)
        self._class[:n] = renumber[self._class[:n]]
        self.classes = [self.classes[i] for i in order.tolist()]
        self._class_index = {c: i for i, c in enumerate(self.classes)}
        self.node_epoch += 1
        self._pod_index = None  # its states read class numbers

    def unused_classes(self) -> int:
        """How many node classes no slot uses."""
        return len(self.classes) - len(np.unique(self._class[: self._n]))

    def _grow(self, need: int) -> None:
        if need <= self._cap:
            return
        cap = max(need, self._cap * 2)
        for attr in ("_alloc", "_used"):
            old = getattr(self, attr)
            new = np.zeros((cap, old.shape[1]), np.int64)
            new[: self._n] = old[: self._n]
            setattr(self, attr, new)
        for attr, dtype in (("_active", np.bool_), ("_class", np.int32), ("_anti", np.int64)):
            old = getattr(self, attr)
            new = np.zeros(cap, dtype)
            new[: self._n] = old[: self._n]
            setattr(self, attr, new)
        self._cap = cap

    def _class_of(self, node: NodeView) -> int:
        labels = frozenset((k, v) for k, v in node.labels.items() if k != HOSTNAME_LABEL)
        key = NodeClass(labels, node.taints, node.unschedulable)
        cid = self._class_index.get(key)
        if cid is None:
            cid = len(self.classes)
            self.classes.append(key)
            self._class_index[key] = cid
        return cid

    def class_id(self, node: NodeView) -> int:
        """The node class ``node`` belongs (or would belong) to."""
        return self._class_of(node)

    def _add_nodes(self, nodes: Iterable[NodeView]) -> None:
        """:meth:`add_node` of each node in turn, with the array writes done once for all."""
        views = [n if HOSTNAME_LABEL in n.labels else _with_hostname(n) for n in nodes]
        if not views:
            return
        first, count = self._n, len(views)
        names = [v.name for v in views]
        fresh = dict(zip(names, range(first, first + count), strict=True))
        if len(fresh) != count or not self._index.keys().isdisjoint(fresh):
            seen = set(self._index)
            for name in names:
                if name in seen:
                    raise ValueError(f"node {name} is already in the snapshot")
                seen.add(name)
        self._index.update(fresh)
        rows = _RequestRows()
        by_row = list(map(rows.row_of, [v.allocatable for v in views]))
        for alloc in rows.requests:  # columns in the order add_node would add them
            for r in alloc:
                self.column(r)
        self._grow(first + count)
        end = first + count
        matrix = np.zeros((len(rows.requests), len(self.resources)), np.int64)
        for k, alloc in enumerate(rows.requests):
            for r, amount in alloc.items():
                matrix[k, self._res_index[r]] = amount
        self._alloc[first:end] = matrix[np.asarray(by_row, np.intp)]
        self._used[first:end] = 0
        self._active[first:end] = True
        self._class[first:end] = [self._class_of(v) for v in views]
        self._names.extend(names)
        self._views.extend(views)
        self._own_view.extend([True] * count)
        self._pods.extend([] for _ in range(count))
        self._ver.extend(next(_versions) for _ in range(count))
        self._n = end
        self.node_epoch += count
        if self._pod_index is not None:
            self._pod_index.nodes_added(first, end)

    def add_node(self, node: NodeView) -> int:
        """Add a node (with no pods); returns its slot."""
        if node.name in self._index:
            raise ValueError(f"node {node.name} is already in the snapshot")
        if HOSTNAME_LABEL not in node.labels:
            node = replace(node, labels={**node.labels, HOSTNAME_LABEL: node.name})
        return self._append_nodes(node, [node.name], own_view=True)

    def add_template_nodes(self, template: NodeView, names: Sequence[str]) -> int:
        """Add copies of ``template`` named ``names``; returns the first new slot."""
        for name in names:
            if name in self._index:
                raise ValueError(f"node {name} is already in the snapshot")
        return self._append_nodes(template, names, own_view=False)

    def _append_nodes(self, view: NodeView, names: Sequence[str], own_view: bool) -> int:
        first, count = self._n, len(names)
        cols = [self.column(r) for r in view.allocatable]
        self._grow(first + count)
        row = np.zeros(len(self.resources), np.int64)
        for r, c in zip(view.allocatable, cols, strict=True):
            row[c] = view.allocatable[r]
        end = first + count
        self._alloc[first:end] = row
        self._used[first:end] = 0
        self._active[first:end] = True
        self._class[first:end] = self._class_of(view)
        for k, name in enumerate(names):
            self._index[name] = first + k
        self._names.extend(names)
        self._views.extend([view] * count)
        self._own_view.extend([own_view] * count)
        self._pods.extend([] for _ in range(count))
        self._ver.extend(next(_versions) for _ in range(count))
        self._n = end
        self.node_epoch += 1
        if self._pod_index is not None:
            self._pod_index.nodes_added(first, end)
        return first

    def replace_node(self, i: int, node: NodeView) -> None:
        """Swap slot ``i``'s view (new taints, labels or unschedulable) keeping its pods; the
        allocatable must not change (a resized machine is a new node)."""
        if HOSTNAME_LABEL not in node.labels:
            node = replace(node, labels={**node.labels, HOSTNAME_LABEL: node.name})
        self._record(("view", i, self._views[i], self._own_view[i], int(self._class[i])))
        self._views[i] = node
        self._own_view[i] = True
        self._class[i] = self._class_of(node)
        self.node_epoch += 1
        if self._pod_index is not None:
            self._pod_index.node_changed(i, self._pods[i])

    def remove_node(self, i: int) -> None:
        """Take a node (which must hold no pods) out of every answer; its slot stays for a revert."""
        if self._pods[i]:
            raise ValueError(f"node {self._names[i]} still has {len(self._pods[i])} pods")
        self._active[i] = False
        self.node_epoch += 1
        self._record(("node-", i))
        if self._pod_index is not None:
            self._pod_index.node_changed(i, ())

    # ----------------------------------------------------------------- pods
    def add_pod(self, pod: Pod, i: int, vec: Int64Array | None = None) -> None:
        """Bind one pod to slot ``i`` (no fit check: the caller decided; ``vec``, its request row, is
        kept as given: it must not change)."""
        self._add_total((pod,), i, vec if vec is not None else self.vector(pod.requests))

    def add_pods_in_order(self, pods: Sequence[Pod], i: int) -> None:
        """Bind ``pods``, each with its own request, to slot ``i`` in that order: what :meth:`add_pod`
        of each in turn does, in one array step (a kept snapshot binds a changed node's pods so)."""
        if not pods:
            return
        column, total = self.column, [0] * len(self.resources)
        for pod in pods:
            for resource, amount in pod.requests.items():
                c = column(resource)  # may add a column (and widen the arrays)
                if c >= len(total):
                    total.extend([0] * (c + 1 - len(total)))
                total[c] += amount
        total[_PODS_COL] = len(pods)  # each pod's row counts 1 against the pod limit, whatever it asks
        if max(total) > _INT64_MAX or min(total) < -_INT64_MAX:
            for pod in pods:  # past int64: wrap exactly as one pod at a time does
                self.add_pod(pod, i)
            return
        self._add_total(pods, i, np.array(total, np.int64))

    def add_pods(self, pods: Sequence[Pod], i: int, vec: Int64Array) -> None:
        """Bind identical pods (each requesting ``vec``) to slot ``i`` in one step."""
        if pods:
            self._add_total(pods, i, vec * len(pods))

    def _add_total(self, pods: Sequence[Pod], i: int, total: Int64Array) -> None:
        """Bind ``pods`` (requesting ``total`` together) to slot ``i``, after its pods, in one step."""
        self._own(i).extend(pods)
        self._used[i] += total
        if self._pod_index is not None:
            self._pod_index.pods_added(i, pods)
        constrained = (
            (1 if pods[0].pod_anti_affinity else 0) if len(pods) == 1 else sum(map(bool, map(_ANTI, pods)))
        )
        if constrained:
            self._anti[i] += constrained
            self.constrained_pods += constrained
        self.pods_epoch += 1
        self._record(("pods+", i, len(pods), total, constrained))

    def add_pods_bulk(
        self, slots: NDArray[np.intp], counts: NDArray[np.int64], pods: Sequence[Pod], vec: Int64Array
    ) -> None:
        """Bind identical pods without inter-pod constraints: ``counts[k]`` of them (taken from ``pods``
        in order) to ``slots[k]``. Slots must be distinct; the pods must carry no anti-affinity."""
        start, index = 0, self._pod_index
        for slot, count in zip(slots.tolist(), counts.tolist(), strict=True):
            self._own(slot).extend(pods[start : start + count])
            if index is not None:
                index.pods_added(slot, pods[start : start + count])
            start += count
        self._used[slots] += counts[:, None] * vec
        self.pods_epoch += 1
        self._record(("bulk+", slots, counts, vec))

    def add_pods_each(self, slots: Sequence[int], pods: Sequence[Pod], vec: Int64Array) -> None:
        """Bind ``pods[k]`` to ``slots[k]`` (distinct slots; pods without inter-pod constraints, each
        requesting ``vec``): :meth:`add_pods_bulk` for the usual one pod per node, without its
        array arithmetic."""
        self._append_each(slots, pods)
        if len(slots) == 1:
            self._used[slots[0]] += vec
        else:
            self._used[list(slots)] += vec  # distinct slots: one array step
        self.pods_epoch += 1
        self._record(("each+", tuple(slots), vec))

    def _append_each(self, slots: Sequence[int], pods: Sequence[Pod]) -> None:
        """Append ``pods[k]`` to slot ``slots[k]``'s list: :meth:`_own` per slot, inline (a walk or a
        replay binds a few dozen pods, each to its own slot)."""
        versions, lists, owned, shared = self._ver, self._pods, self._owned, self._shared
        for slot, pod in zip(slots, pods, strict=True):
            versions[slot] = next(_versions)
            bound = lists[slot]
            if shared and slot not in owned:
                bound = lists[slot] = list(bound)
                owned.add(slot)
            bound.append(pod)
        if self._pod_index is not None:
            self._pod_index.pods_added_each(slots, pods)

    def add_pods_rows(self, slots: NDArray[np.intp], pods: Sequence[Pod], rows: Int64Array) -> None:
        """Bind ``pods[k]`` to ``slots[k]`` requesting ``rows[k]`` (distinct slots; pods without
        inter-pod constraints): a replayed set of binds in one array step."""
        self._append_each(slots.tolist(), pods)
        self._used[slots] += rows
        self.pods_epoch += 1
        self._record(("rows+", slots, rows))

    def add_pod_blocks(
        self, slots: NDArray[np.intp], blocks: Sequence[Sequence[Pod]], totals: Int64Array
    ) -> None:
        """Bind ``blocks[k]`` (pods without inter-pod constraints) to ``slots[k]``, after its pods,
        requesting ``totals[k]`` together: many slots' bindings of several pods each in one array step
        (slots distinct)."""
        index = self._pod_index
        for slot, pods in zip(slots.tolist(), blocks, strict=True):
            self._own(slot).extend(pods)
            if index is not None:
                index.pods_added(slot, pods)
        self._used[slots] += totals
        self.pods_epoch += 1
        self._record(("blocks+", slots, np.array([len(b) for b in blocks], np.int64), totals))

    def take_pods(self, i: int) -> list[Pod]:
        """Unbind every pod of slot ``i`` at once and return them (in binding order)."""
        pods = self._pods[i]
        anti = int(self._anti[i])
        self._record(("clear", i, pods, self._used[i].copy(), anti))
        if self._pod_index is not None:
            self._pod_index.pods_removed(i, pods)
        self._pods[i] = []
        self._ver[i] = next(_versions)
        self._owned.add(i)
        self._used[i] = 0
        self._anti[i] = 0
        self.constrained_pods -= anti
        self.pods_epoch += 1
        return pods

    def remove_pod(self, pod: Pod, i: int, vec: Int64Array | None = None) -> None:
        """Unbind ``pod`` (found by identity) from slot ``i``."""
        pods = self._own(i)
        pos = next(k for k, p in enumerate(pods) if p is pod)
        del pods[pos]
        if self._pod_index is not None:
            self._pod_index.pods_removed(i, (pod,))
        v = vec if vec is not None else self.vector(pod.requests)
        self._used[i] -= v
        self._anti[i] -= bool(pod.pod_anti_affinity)
        self.constrained_pods -= bool(pod.pod_anti_affinity)
        self.pods_epoch += 1
        self._record(("pod-", i, pod, pos, v))

    def topology_values(self, key: str) -> list[str | None]:
        """The value of label ``key`` per slot (None where missing or the node is removed)."""
        cache = self.__dict__.setdefault("_topo_cache", {})
        hit = cache.get(key)
        if hit is not None and hit[0] == self.node_epoch:
            return list(hit[1])
        values: list[str | None] = []
        for i in range(self._n):
            if not self._active[i]:
                values.append(None)
            elif key == HOSTNAME_LABEL and not self._own_view[i]:
                values.append(self._names[i])
            else:
                values.append(self.node(i).labels.get(key))
        cache[key] = (self.node_epoch, tuple(values))
        return values


def _with_hostname(node: NodeView) -> NodeView:
    return replace(node, labels={**node.labels, HOSTNAME_LABEL: node.name})


class _RequestRows:
    """Distinct resource vectors numbered in order of first appearance: by identity first (the pods of
    one template, the live caches' interned values, share one object), then by value."""

    __slots__ = ("by_id", "by_value", "requests")

    def __init__(self) -> None:
        self.by_id: dict[int, tuple[int, Resources]] = {}  # the object kept: its id stays its own
        self.by_value: dict[Resources, int] = {}
        self.requests: list[Resources] = []

    def row_of(self, req: Resources) -> int:
        hit = self.by_id.get(id(req))
        if hit is not None:
            return hit[0]
        row = self.by_value.get(req)
        if row is None:
            row = self.by_value[req] = len(self.requests)
            self.requests.append(req)
        self.by_id[id(req)] = (row, req)
        return row
