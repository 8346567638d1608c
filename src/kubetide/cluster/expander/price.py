"""``price``: keep the options whose new nodes cost least per unit of pod value, nudged toward a node
size that suits the cluster (CA spec §6.4).

For each option: ``(node price x count + stabilizer) / (pod prices + stabilizer)``, times an
"unfitness" penalty for nodes much bigger or smaller than the preferred node, a penalty that fades as
the option adds more nodes (tanh); GPU nodes get a prohibitive penalty, groups that do not exist yet
count double. Lowest wins, exact ties all kept. Prices come from the cloud port's
:class:`~kubetide.cloud.provider.PricingModel` over ``[now, now + 1h]``; an option whose node or pod
price fails is dropped.

With ``fall_through`` (what ``--expander=price`` builds; off by default so the filter alone is CA's, as
the upstream-derived cases pin): when no option has a price at all, CA's chain ends with no option and
no scale-up; kubetide never invents a price, says so in a ``PricesUnavailable`` warning on the status
ConfigMap, and passes every option on, so the next expander in ``--expander`` decides.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import PricingModel
from kubetide.cluster.clusterstate.registry import ClusterEvent
from kubetide.cluster.expander.option import ExpansionContext, Option
from kubetide.cluster.reasons import KubetideEventReason
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import CPU, MEMORY, Resources

__all__ = ["PriceFilter", "preferred_node_resources", "price_score", "simple_node_unfitness"]

MI = 1024 * 1024
GI = 1024 * MI
HOUR_S = 3600.0
GPU_UNFITNESS = 1000.0  # "if the node has a GPU, it is a bad choice unless nothing else fits"
NEW_GROUP_PENALTY = 2.0
# The "stabilize" pod: keeps the ratio sane when the pods themselves are almost free.
STABILIZE_POD = Pod(
    "stabilize", containers=(Container("stabilize", Resources({CPU: 500, MEMORY: 500 * MI})),)
)
# (max cluster nodes, cpu cores, memory MiB) of the preferred node, smallest first.
_PREFERRED = ((2, 1, 3750), (6, 2, 7500), (20, 4, 15000), (60, 8, 30000), (200, 16, 60000))
_PREFERRED_LARGEST = (32, 120000)


def preferred_node_resources(cluster_node_count: int) -> Resources:
    """``SimplePreferredNodeProvider``: bigger clusters prefer bigger nodes."""
    for limit, cores, mem_mi in _PREFERRED:
        if cluster_node_count <= limit:
            return Resources({CPU: cores * 1000, MEMORY: mem_mi * MI})
    cores, mem_mi = _PREFERRED_LARGEST
    return Resources({CPU: cores * 1000, MEMORY: mem_mi * MI})


def simple_node_unfitness(preferred_cpu_m: int, evaluated_cpu_m: int) -> float:
    """How far the node's cpu is from the preferred one, as a ratio >= 1 (capacity cpu)."""
    return max(preferred_cpu_m / evaluated_cpu_m, evaluated_cpu_m / preferred_cpu_m)


def price_score(
    option: Option, pricing: PricingModel, preferred: Resources, now: float, gpu_label: str | None
) -> float | None:
    """The option's score, or None when a price is unavailable."""
    if option.template is None:
        return None
    end = now + HOUR_S
    try:
        node_price = pricing.node_price(option.template, now, end) * option.node_count
        pod_price = sum(pricing.pod_price(p, now, end) for p in option.pods)
        stabilize = pricing.pod_price(STABILIZE_POD, now, end)
    except CloudProviderError:
        return None
    sub = (node_price + stabilize) / (pod_price + stabilize)
    unfit = simple_node_unfitness(preferred[CPU], option.template.capacity[CPU])
    suppressed = (unfit - 1) * (1 - math.tanh((option.node_count - 1) / 15.0)) + 1
    if gpu_label is not None and gpu_label in option.template.labels:
        suppressed = GPU_UNFITNESS
    score = suppressed * sub
    if not option.exists:
        score *= NEW_GROUP_PENALTY
    return score


@dataclass(frozen=True, slots=True)
class PriceFilter:
    pricing: PricingModel
    preferred_node: Callable[[int], Resources] = preferred_node_resources
    gpu_label: str | None = None
    fall_through: bool = False

    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        preferred = self.preferred_node(ctx.cluster_node_count)
        best: list[Option] = []
        lowest: float | None = None
        for o in options:
            score = price_score(o, self.pricing, preferred, ctx.now, self.gpu_label)
            ctx.rate(o.group, "no price" if score is None else f"price score {score:.4g}")
            if score is None:
                continue
            if lowest is None or score < lowest:
                lowest, best = score, [o]
            elif score == lowest:
                best.append(o)
        if not best and options and self.fall_through:
            groups = ", ".join(sorted({o.group for o in options}))
            ctx.events.append(
                ClusterEvent(
                    "Warning",
                    KubetideEventReason.PRICES_UNAVAILABLE,
                    f"price expander: no price is known for any option ({groups}); the next expander decides",
                )
            )
            return list(options)
        return best
