"""Equivalence groups: pods the scheduling simulation may decide once for all.

As Cluster Autoscaler groups pending pods, two pods are equivalent when they share the controller
(owner reference with ``controller: true``, compared by UID, else kind and name) and everything the
filters read: namespace, labels, effective requests, node selection, tolerations, (anti-)affinity,
topology spread, host ports, priority and scheduler. A pod without a controller, and a DaemonSet pod,
is a group of its own.

Grouping must be cheap (30 000 pods in a few milliseconds), so each pod's key is computed once and
interned: the cached key object is shared by all equivalent pods, and grouping is one dict lookup per
pod that hits on identity. Unlike upstream we do not cap groups per controller at 10: the cap only
bounds upstream's comparison cost, not its answers.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubetide.model.pod import Pod

__all__ = [
    "EquivalenceKey",
    "PodGroup",
    "equivalence_key",
    "equivalence_keys",
    "group_pods",
    "has_equivalence_key",
]

_CACHE_ATTR = "_kubetide_equivalence_key"  # kept in the (frozen) pod's __dict__, like cached_property


class EquivalenceKey:
    """An interned, hashable scheduling signature; equal signatures are the same object."""

    __slots__ = ("__weakref__", "_hash", "value")

    def __init__(self, value: tuple[Any, ...]) -> None:
        self.value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, EquivalenceKey) and self.value == other.value)


_INTERNED: weakref.WeakValueDictionary[tuple[Any, ...], EquivalenceKey] = weakref.WeakValueDictionary()


def _signature(pod: Pod) -> tuple[Any, ...]:
    ctrl = pod.controller
    if ctrl is None or ctrl.kind == "DaemonSet":
        owner: tuple[str, ...] = ("pod", pod.namespace, pod.name, pod.uid)
    else:
        owner = ("ctrl", ctrl.uid) if ctrl.uid else ("ctrl", ctrl.kind, ctrl.name)
    return (
        owner,
        pod.namespace,
        tuple(sorted(pod.labels.items())),
        pod.requests,
        tuple(sorted(pod.node_selector.items())),
        pod.required_node_affinity,
        pod.pod_affinity,
        pod.pod_anti_affinity,
        pod.tolerations,
        pod.topology_spread,
        pod.host_ports,
        pod.priority,
        pod.scheduler_name,
    )


def has_equivalence_key(pod: Pod) -> bool:
    """True when the pod's key is derived already."""
    return _CACHE_ATTR in pod.__dict__


def equivalence_key(pod: Pod) -> EquivalenceKey:
    """The pod's interned key (computed on first use, then read from the pod)."""
    cached: EquivalenceKey | None = pod.__dict__.get(_CACHE_ATTR)
    if cached is not None:
        return cached
    sig = _signature(pod)
    key = _INTERNED.get(sig)
    if key is None:
        key = EquivalenceKey(sig)
        _INTERNED[sig] = key
    pod.__dict__[_CACHE_ATTR] = key
    return key


@dataclass(slots=True)
class PodGroup:
    """Equivalent pods, in the order they were given; ``pods[0]`` stands for all of them."""

    key: EquivalenceKey
    pods: list[Pod] = field(default_factory=list)

    @property
    def representative(self) -> Pod:
        return self.pods[0]


_cached_key = operator.attrgetter(_CACHE_ATTR)


# The fields a signature is derived from. Pods of one controller share one template, and the objects
# built from it (the containers tuple, the selector mappings, ...) are shared when the pods
# were made from it (the simulator) or decoded with interning (the live caches): pods whose fields are
# the very same objects have the same signature, so it is derived once for all of them.
_SOURCE_FIELDS = operator.attrgetter(
    "owners",
    "namespace",
    "containers",
    "init_containers",
    "overhead",
    "required_node_affinity",
    "pod_affinity",
    "pod_anti_affinity",
    "tolerations",
    "topology_spread",
    "priority",
    "scheduler_name",
)


def _identity(pod: Pod) -> tuple[Any, ...]:
    # The mappings by value (each pod has its own; insertion order is the template's), the rest by
    # identity. Finer than the signature is harmless: equal signatures still meet in the interned key.
    return (*map(id, _SOURCE_FIELDS(pod)), *pod.labels.items(), None, *pod.node_selector.items())


def _own_group(pod: Pod) -> bool:
    ctrl = pod.controller
    return ctrl is None or ctrl.kind == "DaemonSet"


def _assign_keys(pods: list[Pod]) -> list[EquivalenceKey]:
    """Every pod's key, derived once per set of pods sharing their source objects (and cached on each)."""
    by_identity: dict[tuple[Any, ...], EquivalenceKey] = {}
    keys: list[EquivalenceKey] = []
    append = keys.append
    for pod in pods:
        cached = pod.__dict__.get(_CACHE_ATTR)
        if cached is None:
            ident = _identity(pod)
            cached = by_identity.get(ident)
            if cached is None:
                cached = equivalence_key(pod)
                if not _own_group(pod):  # a pod without controller is a group of its own
                    by_identity[ident] = cached
            else:
                pod.__dict__[_CACHE_ATTR] = cached
        append(cached)
    return keys


def equivalence_keys(pods: list[Pod]) -> list[EquivalenceKey]:
    """Every pod's key: read from the pods in C when all are cached, else derived once per set of pods
    sharing their template's objects."""
    try:
        return list(map(_cached_key, pods))
    except AttributeError:
        return _assign_keys(pods)


def group_pods(pods: Iterable[Pod]) -> list[PodGroup]:
    """Groups in order of their first pod, each keeping its pods' order.

    Written for 10^4-10^5 pods: keys are fetched and numbered by C-level ``map`` calls and pods are
    gathered per group with a stable argsort, so no Python statement runs per pod once keys are cached;
    the first time, a key is derived once per set of pods sharing their template's objects.
    """
    pods = list(pods)
    if not pods:
        return []
    keys = equivalence_keys(pods)
    if len(pods) <= _FEW:
        return _group_few(pods, keys)
    return _group_many(pods, keys)


# Up to this many pods (one node's, as the removal simulation groups them 200 times a loop), a dict
# is faster than the argsort's fixed cost.
_FEW = 64


def _group_few(pods: list[Pod], keys: list[EquivalenceKey]) -> list[PodGroup]:
    members: dict[EquivalenceKey, list[Pod]] = {}
    for pod, key in zip(pods, keys, strict=True):
        group = members.get(key)
        if group is None:
            members[key] = [pod]
        else:
            group.append(pod)
    return [PodGroup(key, group) for key, group in members.items()]


def _group_many(pods: list[Pod], keys: list[EquivalenceKey]) -> list[PodGroup]:
    distinct = list(dict.fromkeys(keys))
    if len(distinct) == 1:
        return [PodGroup(distinct[0], pods)]
    number = {k: i for i, k in enumerate(distinct)}
    codes = np.fromiter(map(number.__getitem__, keys), np.intp, len(keys))
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes, minlength=len(distinct))).tolist()
    groups, start = [], 0
    for key, end in zip(distinct, ends, strict=True):
        members = order[start:end].tolist()
        picked = operator.itemgetter(*members)(pods)
        groups.append(PodGroup(key, list(picked) if len(members) > 1 else [picked]))
        start = end
    return groups
