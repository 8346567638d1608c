"""``ScaleTargetPort.list_pods``'s cache contract: the same sequence object while the matching pods are
unchanged, a new one whenever one changed. The fast path relies on it for speed only: an
implementation returning a fresh, equal list on every call gets the very same decisions. (The
simulator's lister is checked in ``tests/sim/cluster/test_pod_list_contract.py``.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubetide.hpa.controller import HorizontalController
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

from .world import World, hpa


@dataclass
class CachingWorld(World):
    """Keeps the contract: one tuple per distinct pod list."""

    _cached: tuple[int, tuple[Pod, ...]] | None = field(default=None, repr=False)
    lists: set[int] = field(default_factory=set)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        if self._cached is None or self._cached[0] != self.replicas:
            self._cached = (self.replicas, tuple(self.pods()))
        self.lists.add(id(self._cached[1]))
        return self._cached[1]


def test_fresh_equal_lists_give_the_same_decisions_as_cached_ones() -> None:
    fresh, cached = World(replicas=3), CachingWorld(replicas=3)
    controllers = [HorizontalController(w, w) for w in (fresh, cached)]
    target = hpa(utilization=50, max_replicas=30)
    statuses = [target, target]
    for step, usage in enumerate([900, 900, 200, 50, 50, 700, 1200, 100, 100, 100, 100, 100, 100, 100]):
        now = step * 60.0
        results = []
        for i, (world, controller) in enumerate(zip((fresh, cached), controllers, strict=True)):
            world.now, world.usage_per_pod = now, usage
            result = controller.reconcile(statuses[i], now)
            statuses[i] = statuses[i].with_status(result.status)
            results.append(result)
        assert results[0] == results[1], f"step {step}"
        assert fresh.replicas == cached.replicas
    assert fresh.writes == cached.writes and len(fresh.writes) >= 3
    assert len(cached.lists) <= len(fresh.writes) + 1  # one list per pod count, reused between
