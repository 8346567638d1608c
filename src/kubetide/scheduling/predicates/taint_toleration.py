"""TaintToleration: the first NoSchedule or NoExecute taint the pod does not tolerate rejects the node.
PreferNoSchedule only affects scoring, so it never blocks."""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.reasons import FilterFailure, untolerated_taint

__all__ = ["TaintToleration", "first_untolerated_taint"]

_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def first_untolerated_taint(pod: Pod, taints: tuple[Taint, ...]) -> Taint | None:
    for taint in taints:
        if taint.effect in _BLOCKING_EFFECTS and not any(t.tolerates(taint) for t in pod.tolerations):
            return taint
    return None


class TaintToleration:
    name = "TaintToleration"

    def check(
        self,
        pod: Pod,
        node_name: str,
        labels: Mapping[str, str],
        taints: tuple[Taint, ...],
        unschedulable: bool,
    ) -> FilterFailure | None:
        taint = first_untolerated_taint(pod, taints)
        if taint is None:
            return None
        return FilterFailure(self.name, (untolerated_taint(taint.key, taint.value),), unresolvable=True)
