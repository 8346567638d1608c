"""What a new node of an Auto Scaling group looks like (scale from zero), built as CA's aws provider does.

CA's ``buildNodeFromTemplate``: capacity from the instance type's EC2 facts (vCPUs, memory, NVIDIA
GPUs) and 110 pods, then any ``k8s.io/cluster-autoscaler/node-template/resources/<name>`` tag (which may
also set ``pods``); allocatable equals capacity; the generic labels (os, arch, instance type, region,
zone of the group's first availability zone, hostname) joined with the ``.../label/<key>`` tags (tags
win); taints from ``.../taint/<key>`` tags, each ``value:Effect``. The per-group option overrides come
from ``.../autoscaling-options/<key>`` tags with CA's keys. Pure functions over the described values.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from kubetide.cloud.instance import NodeGroupAutoscalingOptions
from kubetide.live.providers.aws.api import AsgInfo, InstanceTypeInfo
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.node import NodeView

__all__ = ["LABEL_TAG", "OPTIONS_TAG", "RESOURCES_TAG", "TAINT_TAG", "options_from_tags", "template_node"]

log = logging.getLogger(__name__)

_PREFIX = "k8s.io/cluster-autoscaler/node-template/"
LABEL_TAG = _PREFIX + "label/"
TAINT_TAG = _PREFIX + "taint/"
RESOURCES_TAG = _PREFIX + "resources/"
OPTIONS_TAG = _PREFIX + "autoscaling-options/"
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
DEFAULT_PODS = 110


def template_node(group: AsgInfo, itype: InstanceTypeInfo, region: str) -> NodeView:
    """The template Node of ``group`` whose machines are of type ``itype``: Ready, as it will be once up."""
    name = f"{group.name}-asg-template"
    capacity: dict[str, str] = {
        "cpu": str(itype.vcpus),
        "memory": f"{itype.memory_mib}Mi",
        "pods": str(DEFAULT_PODS),
    }
    if itype.gpus:
        capacity["nvidia.com/gpu"] = str(itype.gpus)
    for key, value in group.tags.items():
        if key.startswith(RESOURCES_TAG) and key[len(RESOURCES_TAG) :] and value:
            capacity[key[len(RESOURCES_TAG) :]] = value
    zone = group.zones[0] if group.zones else ""
    labels = {
        "kubernetes.io/os": "linux",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": itype.architecture,
        "beta.kubernetes.io/arch": itype.architecture,
        "node.kubernetes.io/instance-type": itype.name,
        "beta.kubernetes.io/instance-type": itype.name,
        "topology.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/region": region,
        "kubernetes.io/hostname": name,
    }
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
        labels["failure-domain.beta.kubernetes.io/zone"] = zone
    taints = []
    for key, value in sorted(group.tags.items()):
        if key.startswith(LABEL_TAG) and key[len(LABEL_TAG) :]:
            labels[key[len(LABEL_TAG) :]] = value
        elif key.startswith(TAINT_TAG) and key[len(TAINT_TAG) :]:
            taint_value, _, effect = value.rpartition(":")
            if effect not in _EFFECTS:
                log.warning(
                    "%s: ignoring tag %s=%s: the effect must be one of %s", group.name, key, value, _EFFECTS
                )
                continue
            taint = {"key": key[len(TAINT_TAG) :], "effect": effect}
            if taint_value:
                taint["value"] = taint_value
            taints.append(taint)
    manifest = {
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": capacity, "allocatable": dict(capacity)},
    }
    return replace(NodeView.from_manifest(manifest), ready=True)


def options_from_tags(
    tags: dict[str, str], defaults: NodeGroupAutoscalingOptions, group: str = ""
) -> NodeGroupAutoscalingOptions | None:
    """``defaults`` with the group's option tags applied; None when it has none (or none valid)."""
    overrides: dict[str, object] = {}
    for key, value in tags.items():
        if not key.startswith(OPTIONS_TAG):
            continue
        option = key[len(OPTIONS_TAG) :]
        try:
            if option in _FLOATS:
                overrides[_FLOATS[option]] = float(value)
            elif option in _DURATIONS:
                overrides[_DURATIONS[option]] = parse_duration(value)
            elif option in _BOOLS:
                if value.lower() not in ("true", "false"):
                    raise ValueError(f"{value!r} is not a boolean")
                overrides[_BOOLS[option]] = value.lower() == "true"
            else:
                log.warning("%s: ignoring unknown autoscaling option tag %s", group, key)
        except (ValueError, DurationError) as exc:
            log.warning("%s: ignoring tag %s=%s: %s", group, key, value, exc)
    return replace(defaults, **overrides) if overrides else None  # type: ignore[arg-type]


# CA's keys (config/const.go), lowercased as CA matches them.
_FLOATS = {
    "scaledownutilizationthreshold": "scale_down_utilization_threshold",
    "scaledowngpuutilizationthreshold": "scale_down_gpu_utilization_threshold",
}
_DURATIONS = {
    "scaledownunneededtime": "scale_down_unneeded_time",
    "scaledownunreadytime": "scale_down_unready_time",
    "maxnodeprovisiontime": "max_node_provision_time",
}
_BOOLS = {
    "zeroornodescaling": "zero_or_max_node_scaling",
    "ignoredaemonsetsutilization": "ignore_daemon_sets_utilization",
}
