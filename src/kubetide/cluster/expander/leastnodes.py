"""``least-nodes``: keep the options that add the fewest nodes (options adding none are ignored)."""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.cluster.expander.option import ExpansionContext, Option

__all__ = ["LeastNodesFilter"]


class LeastNodesFilter:
    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        for o in options:
            ctx.rate(o.group, f"{o.node_count} node(s)")
        counted = [o for o in options if o.node_count > 0]
        if not counted:
            return []
        least = min(o.node_count for o in counted)
        return [o for o in counted if o.node_count == least]
