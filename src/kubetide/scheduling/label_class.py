"""Label classes: what selectors and anti-affinity terms read of a pod (namespace, labels, whether it
is terminating, its required anti-affinity terms). A selector matches a whole class or none of it, so
the pod index counts bound pods per class; a pod's class is derived once per template and cached on
the pod, as its equivalence key is.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import PodAffinityTerm

__all__ = ["LabelClass", "label_class", "label_classes"]

_ATTR = "_kubetide_label_class"  # the pod's LabelClass, cached in its __dict__ like the equivalence key


class LabelClass:
    """What selectors and anti-affinity terms read of a pod; interned, so equal classes are one object."""

    __slots__ = ("__weakref__", "anti", "labels", "namespace", "terminating")

    def __init__(
        self, namespace: str, labels: dict[str, str], terminating: bool, anti: tuple[PodAffinityTerm, ...]
    ) -> None:
        self.namespace = namespace
        self.labels = labels
        self.terminating = terminating
        self.anti = anti


_Value = tuple[str, tuple[tuple[str, str], ...], bool, tuple[PodAffinityTerm, ...]]
_INTERNED: weakref.WeakValueDictionary[_Value, LabelClass] = weakref.WeakValueDictionary()


def _intern(pod: Pod) -> LabelClass:
    terminating = pod.deletion_time is not None
    value = (pod.namespace, tuple(sorted(pod.labels.items())), terminating, pod.pod_anti_affinity)
    found = _INTERNED.get(value)
    if found is None:
        found = _INTERNED[value] = LabelClass(
            pod.namespace, dict(pod.labels), terminating, pod.pod_anti_affinity
        )
    return found


def label_class(pod: Pod) -> LabelClass:
    """The pod's label class (derived once, then read from the pod)."""
    found: LabelClass | None = pod.__dict__.get(_ATTR)
    if found is None:
        found = pod.__dict__[_ATTR] = _intern(pod)
    return found


def label_classes(pods: Sequence[Pod]) -> list[LabelClass]:
    """Every pod's label class, derived once per set of pods with the same labels and the very same
    anti-affinity terms object (the pods of one template), and cached on each pod."""
    try:
        return [pod.__dict__[_ATTR] for pod in pods]
    except KeyError:
        pass
    seen: dict[tuple[object, ...], LabelClass] = {}
    out = []
    for pod in pods:
        found = pod.__dict__.get(_ATTR)
        if found is None:
            # By identity for the terms (alive while the pods are), by value for the labels.
            ident = (pod.namespace, id(pod.pod_anti_affinity), pod.deletion_time is None, *pod.labels.items())
            found = seen.get(ident)
            if found is None:
                found = seen[ident] = _intern(pod)
            pod.__dict__[_ATTR] = found
        out.append(found)
    return out
