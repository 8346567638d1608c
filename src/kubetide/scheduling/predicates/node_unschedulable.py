"""NodeUnschedulable: a cordoned node (``spec.unschedulable``) takes only pods that tolerate
``node.kubernetes.io/unschedulable:NoSchedule``."""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.reasons import FilterFailure, Reason

__all__ = ["NodeUnschedulable"]

_UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable:
    name = "NodeUnschedulable"

    def check(
        self,
        pod: Pod,
        node_name: str,
        labels: Mapping[str, str],
        taints: tuple[Taint, ...],
        unschedulable: bool,
    ) -> FilterFailure | None:
        if not unschedulable or any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return None
        return FilterFailure(self.name, (Reason.NODE_UNSCHEDULABLE.value,), unresolvable=True)
