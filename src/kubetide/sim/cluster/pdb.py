"""PodDisruptionBudgets: how many selected pods may be disrupted now (``disruptionsAllowed``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubetide.model.fields import Node
from kubetide.model.selectors import LabelSelector

if TYPE_CHECKING:
    from kubetide.sim.cluster.pods import SimPod


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector
    min_available: int | str | None = None  # an integer or a percentage like "50%"
    max_unavailable: int | str | None = None

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> DisruptionBudget:
        root = Node(manifest)
        meta, spec = root.get("metadata"), root.get("spec")
        return cls(
            meta.get("namespace").str("default"),
            meta.get("name").str(),
            LabelSelector.parse(spec.get("selector")),
            spec.get("minAvailable").value,
            spec.get("maxUnavailable").value,
        )

    def disruptions_allowed(self, pods: Iterable[SimPod]) -> int:
        """``currentHealthy - desiredHealthy`` over the selected pods, as the disruption controller.

        Percentages are of the selected pods: minAvailable rounds up, maxUnavailable rounds up too
        (so desiredHealthy rounds down), as upstream's ``GetScaledValueFromIntOrPercent``.
        """
        # A pod being deleted (Terminating) counts neither as healthy nor as expected: its controller
        # already replaces it.
        selected = [
            p
            for p in pods
            if not p.deleted and p.terminating_until is None and self.selector.matches(p.spec.labels)
        ]
        expected = len(selected)
        healthy = sum(1 for p in selected if p.phase == "Running" and p.ready)
        if self.min_available is not None:
            desired = _scaled(self.min_available, expected)
        elif self.max_unavailable is not None:
            desired = expected - _scaled(self.max_unavailable, expected)
        else:
            desired = expected  # an empty budget allows no disruption... of the selected pods
        return max(healthy - desired, 0)


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)
