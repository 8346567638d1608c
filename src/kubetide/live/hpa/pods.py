"""The HPA's pod lister over a watch cache: the pods of a namespace matching a selector, memoized so the
controller's fast path holds.

The controller reuses its pod classification while ``list_pods`` returns the very same sequence
object (``hpa/sources/base.py``, ``hpa/selectors.py``). So the answer for (namespace, selector) is
kept with the store's version of the namespace; when the version moves, the matching pods are
collected again and the old sequence is still returned if it holds the very same pod views (a
change elsewhere in the namespace must not cost the HPAs whose pods did not change).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubetide.live.hpa.api import ApiFailure, KubeApi
from kubetide.model.errors import ManifestError
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = ["ListedPods", "PodLister", "PodStore"]


class PodStore(Protocol):
    """Pods by namespace, as a watch cache holds them (a colleague's informer implements this)."""

    def pods(self, namespace: str) -> Sequence[Pod]:
        """Every pod of ``namespace``; a pod unchanged since the last call is the same view object."""
        ...

    def version(self, namespace: str) -> int:
        """A number that changes whenever a pod of ``namespace`` is added, changed or deleted."""
        ...


class PodLister:
    """``list_pods`` with the identity contract: same tuple while the matching pods are unchanged."""

    def __init__(self, store: PodStore) -> None:
        self.store = store
        self._memo: dict[tuple[str, LabelSelector], tuple[int, tuple[Pod, ...]]] = {}

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        key = (namespace, selector)
        version = self.store.version(namespace)
        cached = self._memo.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        matching = tuple(p for p in self.store.pods(namespace) if selector.matches(p.labels))
        if cached is not None and _same_views(cached[1], matching):
            matching = cached[1]
        self._memo[key] = (version, matching)
        return matching

    def forget(self, namespace: str, selector: LabelSelector) -> None:
        """An HPA went away: drop its memo (selectors are few, but HPAs come and go)."""
        self._memo.pop((namespace, selector), None)


def _same_views(old: tuple[Pod, ...], new: tuple[Pod, ...]) -> bool:
    # Identity, not equality: Pod equality skips labels and exact requests, which matter here.
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))


class ListedPods:
    """A ``PodStore`` that lists a namespace's pods on first use and keeps them until ``refresh()``:
    for ``--once`` and tools that run without the watch cache. Pods that can't be read as views are
    skipped and kept in ``problems`` (one bad pod must not hide the others from every HPA)."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api
        self.problems: list[str] = []
        self._pods: dict[str, tuple[Pod, ...]] = {}
        self._version = 0

    def pods(self, namespace: str) -> Sequence[Pod]:
        if namespace not in self._pods:
            self._pods[namespace] = self._list(namespace)
        return self._pods[namespace]

    def version(self, namespace: str) -> int:
        return self._version

    def refresh(self) -> None:
        self._pods.clear()
        self._version += 1

    def _list(self, namespace: str) -> tuple[Pod, ...]:
        try:
            body = self.api.get(f"/api/v1/namespaces/{namespace}/pods")
        except ApiFailure as exc:
            # The HPA then sees no pods ("no pods returned by selector"), a condition, not a crash.
            self.problems.append(f"listing pods in {namespace}: {exc}")
            return ()
        views = []
        for item in body.get("items") or []:
            try:
                views.append(Pod.from_manifest(item))
            except ManifestError as exc:
                name = (item.get("metadata") or {}).get("name", "?")
                self.problems.append(f"pod {namespace}/{name}: {exc}")
        return tuple(views)
