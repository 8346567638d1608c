"""NodeAffinity: ``nodeSelector`` (every label equal) AND required node affinity (any term matches;
a term's expressions on labels and fields on ``metadata.name`` all hold)."""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.reasons import FilterFailure, Reason

__all__ = ["NodeAffinity", "matches_node_selection"]


def matches_node_selection(pod: Pod, node_name: str, labels: Mapping[str, str]) -> bool:
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    terms = pod.required_node_affinity
    if terms is None:
        return True
    return any(term.matches(node_name, labels) for term in terms)


class NodeAffinity:
    name = "NodeAffinity"

    def check(
        self,
        pod: Pod,
        node_name: str,
        labels: Mapping[str, str],
        taints: tuple[Taint, ...],
        unschedulable: bool,
    ) -> FilterFailure | None:
        if matches_node_selection(pod, node_name, labels):
            return None
        return FilterFailure(self.name, (Reason.NODE_AFFINITY.value,), unresolvable=True)
