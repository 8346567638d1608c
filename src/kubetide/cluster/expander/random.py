"""``random``: pick one option uniformly, from the context's seeded generator (reproducible runs)."""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.cluster.expander.option import ExpansionContext, Option

__all__ = ["RandomFilter"]


class RandomFilter:
    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        if not options:
            return []
        return [options[ctx.rng.randrange(len(options))]]
