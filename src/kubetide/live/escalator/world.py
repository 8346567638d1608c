"""Escalator's world (:class:`~kubetide.escalator.world.EscalatorWorldSource`) read from watch caches.

Escalator runs two informers, every node and every pod in every namespace; so does this. Terminal pods
are dropped by the driver (upstream's field selector), so one cache serves both.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ServedVersions, resource_kinds
from kubetide.kube.rest import Rest
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["EscalatorCaches"]


class EscalatorCaches:
    def __init__(self, rest: Rest, versions: ServedVersions) -> None:
        kinds = resource_kinds(versions)
        self.node_cache: Informer[NodeView] = Informer(rest, kinds["nodes"], NodeView.from_manifest)
        self.pod_cache: Informer[Pod] = Informer(rest, kinds["pods"], Pod.from_manifest)

    def start(self) -> EscalatorCaches:
        self.node_cache.start()
        self.pod_cache.start()
        return self

    def wait_synced(self, timeout: float) -> bool:
        return self.node_cache.wait_synced(timeout) and self.pod_cache.wait_synced(timeout)

    def stop(self) -> None:
        self.node_cache.stop()
        self.pod_cache.stop()

    def unsynced(self) -> list[str]:
        """The caches not synced now (a watch failed, no new list yet): the loop must not run."""
        return [c.name for c in (self.node_cache, self.pod_cache) if not c.has_synced()]

    def nodes(self) -> Sequence[NodeView]:
        return self.node_cache.views()

    def pods(self) -> Sequence[Pod]:
        return self.pod_cache.views()
