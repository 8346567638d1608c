"""Which Kubernetes objects the API server would refuse: its validation rules, for the kinds and fields
kubetide reads, with every problem at once and its field path.

:func:`validate_object` is the one entry point: a manifest (a dict from YAML or JSON) and where it is
(``spec.objects[3]``) in, the problems out (empty: the API server would accept it, as far as the
fields kubetide reads go). It never raises on odd input: a value of the wrong type is one problem.
Each file kubetide reads objects from calls it (the scenario loader, ``explain --snapshot``,
``hpa explain -f``, the kwok provider's node templates; ``scenario from-cluster`` goes through the
scenario loader). Objects read from a live API server are not re-validated: that server already did.

The rules are those of ``pkg/apis/{core,apps,batch,autoscaling,policy}/validation`` and
``k8s.io/apimachinery/pkg/{api,apis/meta/v1,util}/validation``, applied after the API server's
defaulting; the README ("Which Kubernetes validation rules kubetide applies") lists them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.validation.autoscaling import validate_hpa_manifest
from kubetide.model.validation.checker import Checker
from kubetide.model.validation.others import validate_config_map, validate_node, validate_pdb
from kubetide.model.validation.pods import validate_pod
from kubetide.model.validation.workloads import (
    validate_daemon_set,
    validate_deployment,
    validate_job,
    validate_replica_set,
    validate_replication_controller,
    validate_stateful_set,
)

__all__ = ["VALIDATED_KINDS", "read_validated", "validate_object"]

T = TypeVar("T")
_Rule = Callable[[Checker, Mapping[str, Any], str], None]

_RULES: dict[str, _Rule] = {
    "Pod": validate_pod,
    "Deployment": validate_deployment,
    "ReplicaSet": validate_replica_set,
    "StatefulSet": validate_stateful_set,
    "DaemonSet": validate_daemon_set,
    "Job": validate_job,
    "ReplicationController": validate_replication_controller,
    "HorizontalPodAutoscaler": validate_hpa_manifest,
    "PodDisruptionBudget": validate_pdb,
    "ConfigMap": validate_config_map,
    "Node": validate_node,
}

VALIDATED_KINDS = tuple(_RULES)


def validate_object(manifest: Any, path: str = "") -> list[FieldError]:
    """Every problem the API server would find in ``manifest`` (by its ``kind``; other kinds: none)."""
    if not isinstance(manifest, Mapping):
        return []
    rule = _RULES.get(str(manifest.get("kind")))
    if rule is None:
        return []
    ck = Checker()
    rule(ck, manifest, path)
    return ck.problems


def read_validated(manifest: Any, path: str, read: Callable[[Any, str], T]) -> T:
    """``read(manifest, path)`` (a typed view, e.g. ``Pod.from_manifest``) once the manifest passes
    :func:`validate_object`; otherwise one ManifestError with every problem. The view stops at its
    first problem; it is added unless the validation already named that field."""
    problems = validate_object(manifest, path)
    try:
        view = read(manifest, path)
    except ManifestError as exc:
        known = {_tokens(p.path) for p in problems}
        problems += [e for e in exc.errors if _tokens(e.path) not in known]
    if problems:
        raise ManifestError(problems)
    return view


def _tokens(path: str) -> tuple[str, ...]:
    """A path's names and indices, however keys are written (``a.b/c`` and ``a["b/c"]`` alike)."""
    return tuple(t for t in re.split(r'[.\[\]"]', path) if t)
