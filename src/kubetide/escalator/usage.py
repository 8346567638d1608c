"""Utilisation and the scale-up size: Escalator's two formulas (spec §4.3, §4.4).

Utilisation is requests over the allocatable of untainted nodes, per resource, in percent; the larger
of CPU and memory drives every decision. With no untainted node and something to run it is +inf
("scale up from zero"). The scale-up size is the node count that brings the busier resource back to
``scale_up_threshold_percent``: ``ceil(n * (pct - thr) / thr)``, or from zero nodes
``ceil(request / cached node allocatable / thr * 100)`` and 1 when nothing is cached.
The float expressions keep upstream's operation order so ties round the same way.
"""

from __future__ import annotations

import math

from kubetide.escalator.reasons import Message
from kubetide.escalator.requests import CpuMem

__all__ = ["EscalatorError", "escalator_percent_usage", "escalator_scale_up_delta"]

INF = math.inf


class EscalatorError(Exception):
    """A computation Escalator refuses, with its error text (``str(exc)``)."""


def escalator_percent_usage(requests: CpuMem, capacity: CpuMem, untainted_nodes: int) -> tuple[float, float]:
    """``(cpu%, mem%)``; +inf for both when scaling up from zero; EscalatorError on zero capacity."""
    if requests.is_empty() and capacity.is_empty() and untainted_nodes == 0:
        return 0.0, 0.0
    if capacity.cpu_m == 0 or capacity.mem_bytes == 0:
        if untainted_nodes == 0:
            # Upstream returns math.MaxFloat64; +inf compares the same against every threshold.
            return INF, INF
        raise EscalatorError(Message.DIVIDE_BY_ZERO)
    # Upstream divides memory milli-values; the ratio is the same in bytes.
    return requests.cpu_m / capacity.cpu_m * 100, requests.mem_bytes / capacity.mem_bytes * 100


def escalator_scale_up_delta(
    untainted_nodes: int,
    cpu_percent: float,
    mem_percent: float,
    requests: CpuMem,
    cached_node: CpuMem,
    scale_up_threshold_percent: int,
) -> int:
    """Nodes to add so the busier resource drops back to the threshold (upstream ``calcScaleUpDelta``)."""
    if scale_up_threshold_percent <= 0:
        # Validation rejects this; upstream would divide by zero and overflow the int conversion.
        raise EscalatorError(Message.THRESHOLD_NOT_POSITIVE)
    threshold = float(scale_up_threshold_percent)
    if math.isinf(cpu_percent) or math.isinf(mem_percent):
        if cached_node.cpu_m == 0 or cached_node.mem_bytes == 0:
            # Nothing cached (no node seen since start-up): one node, then measure.
            return 1
        need_cpu = math.ceil(requests.cpu_m / cached_node.cpu_m / threshold * 100)
        need_mem = math.ceil(requests.mem_bytes / cached_node.mem_bytes / threshold * 100)
    else:
        n = float(untainted_nodes)
        need_cpu = math.ceil(n * ((cpu_percent - threshold) / threshold))
        need_mem = math.ceil(n * ((mem_percent - threshold) / threshold))
    delta = max(need_cpu, need_mem)
    if delta < 0:
        raise EscalatorError(Message.NEGATIVE_DELTA)
    return delta
