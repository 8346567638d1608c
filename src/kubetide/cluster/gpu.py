"""GPU nodes as CA tells them (utils/gpu, processors/customresources): a node with the cloud's GPU label
or with GPUs allocatable is a GPU node; its scale-down utilization is its GPUs' alone (compared with
``--scale-down-gpu-utilization-threshold``), and a labelled node whose GPUs are not allocatable yet
(the device plugin still starting) is counted as not ready, so its group is not scaled up again for
pods that are only waiting for those GPUs.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import replace
from itertools import compress, repeat

from kubetide.model.node import NodeView

__all__ = ["DIRECTX_RESOURCE", "GPU_RESOURCE", "gpu_resource", "with_unready_gpus_unready"]

GPU_RESOURCE = "nvidia.com/gpu"
DIRECTX_RESOURCE = "microsoft.com/directx"
_LABELS = operator.attrgetter("labels")


def gpu_resource(node: NodeView, gpu_label: str) -> str | None:
    """``GetNodeGPUFromCloudProvider``: the GPU resource of a GPU node, None for any other node."""
    if (gpu_label and gpu_label in node.labels) or node.allocatable[GPU_RESOURCE] > 0:
        return GPU_RESOURCE
    return None


def with_unready_gpus_unready(nodes: Iterable[NodeView], gpu_label: str) -> list[NodeView]:
    """``FilterOutNodesWithUnreadyResources``: a Ready node with the GPU label but neither GPUs nor
    DirectX devices allocatable becomes a not-ready copy (readiness dating from its creation)."""
    out = list(nodes)
    if not gpu_label:
        return out
    labelled = map(operator.contains, map(_LABELS, out), repeat(gpu_label))
    for i in compress(range(len(out)), labelled):  # only the labelled nodes (found in C)
        n = out[i]
        if n.ready and n.allocatable[GPU_RESOURCE] == 0 and n.allocatable[DIRECTX_RESOURCE] == 0:
            out[i] = replace(n, ready=False)
    return out
