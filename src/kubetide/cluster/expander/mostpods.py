"""``most-pods``: keep the options that schedule the most pending pods."""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.cluster.expander.option import ExpansionContext, Option

__all__ = ["MostPodsFilter"]


class MostPodsFilter:
    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        if not options:
            return []
        for o in options:
            ctx.rate(o.group, f"{len(o.pods)} pod(s)")
        most = max(len(o.pods) for o in options)
        return [o for o in options if len(o.pods) == most]
