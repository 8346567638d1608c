"""``least-waste`` (CA's default since 1.33): keep the options leaving the least idle cpu and memory.

Score = unused cpu fraction + unused memory fraction of the new nodes' *capacity* (not allocatable, as
upstream). Lowest score wins; exact ties are all kept. Options whose group has no template are skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.cluster.expander.option import ExpansionContext, Option
from kubetide.model.resources import CPU, MEMORY

__all__ = ["LeastWasteFilter", "waste_score"]


def waste_score(option: Option) -> float | None:
    if option.template is None:
        return None
    cpu = option.template.capacity[CPU] * option.node_count
    mem = option.template.capacity[MEMORY] * option.node_count
    pods_cpu = sum(p.requests[CPU] for p in option.pods)
    pods_mem = sum(p.requests[MEMORY] for p in option.pods)
    # Go divides float64s: a zero capacity gives NaN/Inf there; such an option never wins.
    if cpu <= 0 or mem <= 0:
        return None
    return (cpu - pods_cpu) / cpu + (mem - pods_mem) / mem


class LeastWasteFilter:
    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        best: list[Option] = []
        least: float | None = None
        for o in options:
            score = waste_score(o)
            ctx.rate(o.group, "no template or no capacity" if score is None else f"waste {score:.4g}")
            if score is None:
                continue
            if least is None or score < least:
                least, best = score, [o]
            elif score == least:
                best.append(o)
        return best
