"""A watch cache's views grouped by a key (client-go's indexer), kept up to date change by change.

The Cluster Autoscaler's loop needs every node's pods and the pods bound to none; walking 150,000
pods for them each loop costs more than the rest of a quiet loop. The cache groups its views as it
builds them, and after a few watch events moves only the changed views. Each group keeps the views'
order (the cache's: a modified object keeps its place, a new one comes last), and a group that
changes is a new list: a group handed out earlier is never changed, so a reader may keep it and
tell an unchanged group by identity.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar

__all__ = ["OrderedIndex"]

V = TypeVar("V")


class OrderedIndex(Generic[V]):
    """Views by ``key(view)`` (None: in no group), each group in the views' order."""

    def __init__(self, key: Callable[[V], str | None]) -> None:
        self._key = key
        self._order: dict[str, int] = {}  # object key -> its place in the views' order
        self._next = 0
        self._places: dict[str, list[int]] = {}  # group -> its views' places, ascending
        self._groups: dict[str, list[V]] = {}  # group -> its views; the lists handed out
        self._touched: set[str] = set()

    def rebuild(self, views: Mapping[str, V]) -> None:
        """Every view, by object key, in order."""
        self._order = dict(zip(views, itertools.count(), strict=False))
        self._next = len(self._order)
        places: dict[str, list[int]] = {}
        groups: dict[str, list[V]] = {}
        key = self._key
        for place, view in enumerate(views.values()):
            group = key(view)
            if group is None:
                continue
            members = groups.get(group)
            if members is None:
                places[group], groups[group] = [place], [view]
            else:
                places[group].append(place)
                members.append(view)
        self._places, self._groups = places, groups

    def begin(self) -> None:
        """A new round of changes: the groups handed out so far stay as they are."""
        self._groups = dict(self._groups)
        self._touched = set()

    def update(self, object_key: str, before: V | None, after: V | None, *, moved: bool) -> None:
        """One object's view changed from ``before`` to ``after`` (None: absent); ``moved``: the object
        was added again, so it now comes after every other."""
        if before is not None:
            place = self._order[object_key]
            group = self._key(before)
            if group is not None:
                places, members = self._own(group)
                at = bisect.bisect_left(places, place)
                del places[at], members[at]
                if not members:
                    del self._places[group], self._groups[group]
                    self._touched.discard(group)
        if after is None:
            self._order.pop(object_key, None)
            return
        if moved or object_key not in self._order:
            self._order[object_key] = self._next
            self._next += 1
        group = self._key(after)
        if group is not None:
            place = self._order[object_key]
            places, members = self._own(group)
            at = bisect.bisect_left(places, place)
            places.insert(at, place)
            members.insert(at, after)

    def _own(self, group: str) -> tuple[list[int], list[V]]:
        """The group's lists, copied the first time a round changes them (handed-out lists stay)."""
        if group not in self._touched:
            self._touched.add(group)
            self._places[group] = list(self._places.get(group, ()))
            self._groups[group] = list(self._groups.get(group, ()))
        return self._places[group], self._groups[group]

    def groups(self) -> Mapping[str, Sequence[V]]:
        """The groups now: a mapping no later change alters."""
        return self._groups
