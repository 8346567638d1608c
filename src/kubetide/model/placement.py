"""Where a workload's first pods run: the ``kubetide.io/placement`` annotation.

``scenario from-cluster`` (and ``record``) write on each Deployment, StatefulSet and Job the simulated
node standing for each node its pods ran on at the start, as a JSON object of node name to pod count
(``{"general-1": 3, "general-2": 1}``). The simulated controller binds the pods it creates to those nodes
(``spec.nodeName``, the scheduler bypassed as for a bare Pod bound to a node) until the counts are
spent; the pods after them are placed by the simulated scheduler. So a recorded cluster starts as it
was, not as the simulated scheduler would have packed it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubetide.model.errors import ManifestError
from kubetide.model.validation.names import dns1123_subdomain

__all__ = ["PLACEMENT_ANNOTATION", "parse_placement", "placement_of"]

PLACEMENT_ANNOTATION = "kubetide.io/placement"


def parse_placement(raw: Any, path: str) -> tuple[str, ...]:
    """The nodes of a workload's first pods, one entry per pod, in the annotation's order; raises
    :class:`ManifestError` naming ``path`` (the annotation's) when it is not such an object."""
    if not isinstance(raw, str):
        raise ManifestError.at(path, f"must be a string holding a JSON object, got {type(raw).__name__}")
    try:
        counts = json.loads(raw)
    except ValueError as exc:
        raise ManifestError.at(path, f"is not JSON: {exc}") from None
    if not isinstance(counts, dict):
        raise ManifestError.at(path, 'must be a JSON object of node name to pod count, e.g. {"n-1": 2}')
    problems = []
    nodes: list[str] = []
    for node, count in counts.items():
        bad_name = dns1123_subdomain(node)
        if bad_name:
            problems.append(f"node {node!r}: {'; '.join(bad_name)}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            problems.append(f"node {node!r}: the pod count must be an integer >= 1, got {count!r}")
        elif not bad_name:
            nodes += [node] * count
    if problems:
        raise ManifestError.at(path, "; ".join(problems))
    return tuple(nodes)


def placement_of(manifest: Mapping[str, Any], path: str = "") -> tuple[str, ...]:
    """The placement of ``manifest`` (empty without the annotation)."""
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    if PLACEMENT_ANNOTATION not in annotations:
        return ()
    where = f'{path + "." if path else ""}metadata.annotations["{PLACEMENT_ANNOTATION}"]'
    return parse_placement(annotations[PLACEMENT_ANNOTATION], where)
