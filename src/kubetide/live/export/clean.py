"""Manifests cleaned as ``kubectl get -o yaml`` output is cleaned before re-applying it elsewhere.

What the API server adds (status, identity, bookkeeping, controller-generated selectors) describes
*this* cluster's copy of the object, not the object a user wrote: left in, it would pin a scenario to
uids and node names that do not exist in the simulation. What a user wrote, including the defaults the
server filled in, stays: the loader accepts them and they are what the cluster actually runs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["clean_manifest"]

# Identity and bookkeeping of this cluster's copy (ownerReferences: the owners are not exported with
# uids, and the simulator's controllers own what they create).
_SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "ownerReferences",
    "generateName",
)
# Annotations written by tools and controllers about this copy, not by the user about the workload.
_SERVER_ANNOTATIONS = (
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "deprecated.daemonset.template.generation",
)
# Where the ServiceAccount admission plugin mounts the token it injects into every pod.
SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
# A Job's selector and labels the Job controller generated (unless the user asked for manualSelector):
# re-applied as written, the API server rejects the Job (the selector would have to be manual).
_JOB_GENERATED_LABELS = ("controller-uid", "job-name")


def _clean_metadata(meta: dict[str, Any]) -> None:
    for key in _SERVER_METADATA:
        meta.pop(key, None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        for key in _SERVER_ANNOTATIONS:
            annotations.pop(key, None)
        if not annotations:
            del meta["annotations"]


def _clean_template(spec: dict[str, Any]) -> None:
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    meta = template.get("metadata")
    if isinstance(meta, dict):
        # ``creationTimestamp: null``: the API's serialisation of an unset time, not a value.
        if meta.get("creationTimestamp", "") is None:
            del meta["creationTimestamp"]
        if not meta:
            del template["metadata"]


def _drop_labels(meta: Any, keys: tuple[str, ...]) -> None:
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if isinstance(labels, dict):
        for key in keys:
            labels.pop(key, None)
        if not labels:
            del meta["labels"]


def _clean_job(job: dict[str, Any], spec: dict[str, Any]) -> None:
    if spec.get("manualSelector"):
        return
    spec.pop("selector", None)
    # The server copies the template's labels to the Job's own when it has none (1.20 does).
    _drop_labels(job.get("metadata"), _JOB_GENERATED_LABELS)
    _drop_labels((spec.get("template") or {}).get("metadata"), _JOB_GENERATED_LABELS)


def _clean_claim_templates(spec: dict[str, Any]) -> None:
    # A StatefulSet's claim templates are stored as whole PVCs: status and an unset time included.
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            claim.pop("status", None)
            meta = claim.get("metadata")
            if isinstance(meta, dict) and meta.get("creationTimestamp", "") is None:
                del meta["creationTimestamp"]


def _clean_pod(spec: dict[str, Any]) -> None:
    # The node it was bound to here does not exist in the simulation: let the scheduler place it.
    spec.pop("nodeName", None)
    # The token volume admission injected names this cluster's secret (default-token-x7k2p) or
    # projection (kube-api-access-*); admission injects a fresh one wherever the pod is created.
    injected: set[str] = set()
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        mounts = container.get("volumeMounts") if isinstance(container, dict) else None
        if not isinstance(mounts, list):
            continue
        injected |= {m.get("name") for m in mounts if m.get("mountPath") == SERVICE_ACCOUNT_MOUNT}
        container["volumeMounts"] = [m for m in mounts if m.get("mountPath") != SERVICE_ACCOUNT_MOUNT]
        if not container["volumeMounts"]:
            del container["volumeMounts"]
    volumes = spec.get("volumes")
    if injected and isinstance(volumes, list):
        spec["volumes"] = [v for v in volumes if v.get("name") not in injected]
        if not spec["volumes"]:
            del spec["volumes"]


def clean_manifest(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` without status and server bookkeeping; ``obj`` is left unchanged."""
    out = copy.deepcopy(dict(obj))
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        _clean_metadata(meta)
    spec = out.get("spec")
    if isinstance(spec, dict):
        _clean_template(spec)
        if out.get("kind") == "Job":
            _clean_job(out, spec)
        elif out.get("kind") == "StatefulSet":
            _clean_claim_templates(spec)
        elif out.get("kind") == "Pod":
            _clean_pod(spec)
    return out
