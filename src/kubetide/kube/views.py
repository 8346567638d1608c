"""Pod views from the API's JSON, quickly: the same :class:`~kubetide.model.pod.Pod` as
``Pod.from_manifest``, built straight from the decoded dicts, with each template's parts parsed once.

At 150,000 pods the cold start of the live caches went mostly to ``Pod.from_manifest``: a field
wrapper and an abstract-class check per field read, and every pod's containers, tolerations and
owners parsed again although the pods of one controller carry the same ones. Here the plain
shapes the API server sends are read with direct dict access, and the parts pods of one template
share (containers, init containers, owners, tolerations, affinity, spread, overhead) are parsed once
per distinct JSON content and the parsed objects shared, so the pods of a template also share one
request sum and one scheduling signature (:func:`kubetide.model.pod.Pod.requests`,
:mod:`kubetide.scheduling.equivalence` key their work on those objects' identity). Repeated strings
(label keys and values, namespaces, node names) are interned, so 150,000 pods keep one copy of each.

Anything not of the plain shape (a wrong type, a value the model checks, an unknown phase) goes to
``Pod.from_manifest``, which stays the authority: it builds the view or raises the error that names
the field. Input must come from JSON (the memo keys are the parts' msgpack encoding, which tells
strings, numbers and booleans apart but not a YAML date from its text). ``tests/kube/test_views.py``
checks on generated pods that both paths give equal views, field by field.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from kubetide.model.fields import Node, parse_time
from kubetide.model.pod import PHASES, Container, OwnerRef, Pod
from kubetide.model.resources import EMPTY, Resources
from kubetide.model.scheduling_terms import (
    NodeSelectorTerm,
    PodAffinityTerm,
    Toleration,
    TopologySpreadConstraint,
)

__all__ = ["pod_from_json"]

T = TypeVar("T")
Json = dict[str, Any]
_MEMO_MAX = 16_384  # distinct parts per table; a table is cleared when full (a cache, not a registry)
_STRINGS_MAX = 1_000_000
_FLOAT_MAX = int(sys.float_info.max)
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_encode = msgspec.msgpack.Encoder().encode
_intern = sys.intern


class _Irregular(Exception):
    """Not the plain shape: ``Pod.from_manifest`` decides."""


class _Memo:
    """Parsed parts by their encoding: equal JSON content, one shared parsed object."""

    __slots__ = ("_parse", "_table")

    def __init__(self, parse: Callable[[Any], Any]) -> None:
        self._parse = parse
        self._table: dict[bytes, Any] = {}

    def get(self, value: Any) -> Any:
        key = _encode(value)
        hit = self._table.get(key)
        if hit is None:
            if len(self._table) >= _MEMO_MAX:
                self._table.clear()
            hit = self._table[key] = self._parse(value)
        return hit


def _list_of(value: Any, parse: Callable[[Node], T], path: str) -> tuple[T, ...]:
    if type(value) is not list:
        raise _Irregular
    return tuple(parse(Node(v, f"{path}[{i}]")) for i, v in enumerate(value))


def _owners(value: Any) -> tuple[OwnerRef, ...]:
    return _list_of(
        value,
        lambda o: OwnerRef(
            o.get("kind").str(), o.get("name").str(), o.get("uid").str(""), o.get("controller").bool(False)
        ),
        "metadata.ownerReferences",
    )


def _node_affinity(value: Any) -> tuple[NodeSelectorTerm, ...]:
    return tuple(
        NodeSelectorTerm.parse(t) for t in Node(value, _REQUIRED_PATH).get("nodeSelectorTerms").list()
    )


def _pod_terms(path: str) -> Callable[[Any], tuple[PodAffinityTerm, ...]]:
    return lambda value: tuple(PodAffinityTerm.parse(t) for t in Node(value, path).list())


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_REQUIRED_PATH = f"spec.affinity.nodeAffinity.{_REQUIRED}"
_CONTAINERS = _Memo(lambda v: _list_of(v, Container.parse, "spec.containers"))
_INIT_CONTAINERS = _Memo(
    lambda v: _list_of(v, lambda n: Container.parse(n, init=True), "spec.initContainers")
)
_OWNERS = _Memo(_owners)
_TOLERATIONS = _Memo(lambda v: _list_of(v, Toleration.parse, "spec.tolerations"))
_SPREAD = _Memo(lambda v: _list_of(v, TopologySpreadConstraint.parse, "spec.topologySpreadConstraints"))
_NODE_AFFINITY = _Memo(_node_affinity)
_POD_AFFINITY = _Memo(_pod_terms(f"spec.affinity.podAffinity.{_REQUIRED}"))
_POD_ANTI_AFFINITY = _Memo(_pod_terms(f"spec.affinity.podAntiAffinity.{_REQUIRED}"))
_OVERHEAD = _Memo(lambda v: Resources.parse(v, "spec.overhead"))
_POD_REQUESTS = _Memo(lambda v: Resources.parse(v, "spec.resources.requests"))
_TIMES: dict[str, float] = {}
_STRINGS: dict[str, str] = {}


def _interned(text: str) -> str:
    """One shared copy of a repeated string (label keys and values, namespaces, node names)."""
    hit = _STRINGS.get(text)
    if hit is None:
        if len(_STRINGS) >= _STRINGS_MAX:
            _STRINGS.clear()
        hit = _STRINGS[text] = _intern(text)
    return hit


def _str(value: Any, default: str) -> str:
    if value is None:
        return default
    if type(value) is not str:
        raise _Irregular
    return value


def _string_map(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if type(value) is not dict:
        raise _Irregular
    out = {}
    for k, v in value.items():
        if type(v) is not str or type(k) is not str:
            raise _Irregular
        out[_interned(k)] = _interned(v)
    return out


def _time(value: Any) -> float | None:
    if value is None:
        return None
    if type(value) is not str:
        raise _Irregular
    hit = _TIMES.get(value)
    if hit is None:
        if len(_TIMES) >= _MEMO_MAX:
            _TIMES.clear()
        hit = _TIMES[value] = parse_time(value)  # a ValueError: the model's path reports it
    return hit


def _finite_number(value: Any) -> bool:
    """What ``Node.number`` accepts: an int a float can hold, or a finite float (not a bool)."""
    if type(value) is int:
        return abs(value) <= _FLOAT_MAX
    return type(value) is float and math.isfinite(value)


def _mapping(value: Any) -> Json:
    if value is None:
        return {}
    if type(value) is not dict:
        raise _Irregular
    return value


def _parts(value: Any, memo: _Memo) -> Any:
    """A list part: () when absent, else parsed once per distinct content."""
    if value is None:
        return ()
    return memo.get(value)


def _fast(manifest: Any) -> Pod:
    if type(manifest) is not dict:
        raise _Irregular
    meta, spec, status = (_mapping(manifest.get(k)) for k in ("metadata", "spec", "status"))
    name = meta.get("name")
    if type(name) is not str:
        raise _Irregular
    ready: bool | None = None
    transition = unschedulable = None
    conditions = status.get("conditions")
    if conditions is None:
        conditions = ()
    elif type(conditions) is not list:
        raise _Irregular
    for cond in conditions:
        if type(cond) is not dict:
            raise _Irregular
        kind, state = cond.get("type"), cond.get("status")
        if type(kind) is not str or type(state) is not str:
            raise _Irregular  # the model requires both (its error names the condition)
        if kind == "Ready":
            ready = state == "True"
            transition = _time(cond.get("lastTransitionTime"))
        elif kind == "PodScheduled" and state == "False" and _str(cond.get("reason"), "") == "Unschedulable":
            unschedulable = _str(cond.get("message"), "")
    affinity = _mapping(spec.get("affinity"))
    node_affinity = _mapping(affinity.get("nodeAffinity"))
    required = node_affinity.get(_REQUIRED)
    pod_affinity, anti_affinity = (
        _mapping(affinity.get("podAffinity")),
        _mapping(affinity.get("podAntiAffinity")),
    )
    resources = _mapping(spec.get("resources"))
    pod_requests = resources.get("requests")
    overhead = spec.get("overhead")
    volumes = spec.get("volumes")
    if volumes is None:
        volumes = ()
    elif type(volumes) is list and all(type(v) is dict for v in volumes):
        volumes = tuple(volumes)
    else:
        raise _Irregular
    priority = spec.get("priority")
    if priority is None:
        priority = 0
    elif type(priority) is not int:
        raise _Irregular
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and not _finite_number(grace):
        raise _Irregular
    phase = _str(status.get("phase"), "Pending")
    restart = _str(spec.get("restartPolicy"), "Always")
    if phase not in PHASES or restart not in _RESTART_POLICIES:
        raise _Irregular
    uid = _str(meta.get("uid"), "")
    state = {
        "name": name,
        "namespace": _interned(_str(meta.get("namespace"), "default")),
        "uid": uid,
        "labels": _string_map(meta.get("labels")),
        "annotations": _string_map(meta.get("annotations")),
        "owners": _parts(meta.get("ownerReferences"), _OWNERS),
        "containers": _parts(spec.get("containers"), _CONTAINERS),
        "init_containers": _parts(spec.get("initContainers"), _INIT_CONTAINERS),
        "overhead": EMPTY if overhead is None else _OVERHEAD.get(overhead),
        "pod_requests": None if pod_requests is None else _POD_REQUESTS.get(pod_requests),
        "node_name": _interned(_str(spec.get("nodeName"), "")),
        "node_selector": _string_map(spec.get("nodeSelector")),
        "required_node_affinity": None if required is None else _NODE_AFFINITY.get(required),
        "pod_affinity": _parts(pod_affinity.get(_REQUIRED), _POD_AFFINITY),
        "pod_anti_affinity": _parts(anti_affinity.get(_REQUIRED), _POD_ANTI_AFFINITY),
        "tolerations": _parts(spec.get("tolerations"), _TOLERATIONS),
        "topology_spread": _parts(spec.get("topologySpreadConstraints"), _SPREAD),
        "priority": priority,
        "scheduler_name": _interned(_str(spec.get("schedulerName"), "default-scheduler")),
        "volumes": volumes,
        "phase": phase,
        "ready": ready,
        "ready_transition": transition,
        "start_time": _time(status.get("startTime")),
        "creation_time": _time(meta.get("creationTimestamp")),
        "deletion_time": _time(meta.get("deletionTimestamp")),
        "unschedulable_message": unschedulable,
        "restart_policy": restart,
        "termination_grace_s": grace,
        "pod_requests_milli": None,
    }
    pod = object.__new__(Pod)
    pod.__dict__.update(state)  # Pod is a frozen dataclass without __post_init__: its fields, set
    return pod


def pod_from_json(manifest: Any) -> Pod:
    """``Pod.from_manifest(manifest)`` for a pod decoded from the API's JSON, several times faster."""
    try:
        return _fast(manifest)
    except Exception:  # irregular, or a part the model refused: the model decides and names the field
        return Pod.from_manifest(manifest)
