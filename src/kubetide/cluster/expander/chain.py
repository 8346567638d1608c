"""The ``--expander`` chain: filters in flag order, stopping as soon as one option is left.

If several survive every filter, the fallback picks one (random, as upstream). ``random`` may only be
the last name, and a name may appear once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubetide.cluster.expander.option import ExpanderStep, ExpansionContext, Filter, Option

__all__ = ["ChainStrategy"]


@dataclass(frozen=True, slots=True)
class ChainStrategy:
    filters: tuple[Filter, ...]
    fallback: Filter
    names: tuple[str, ...] = ()  # the --expander names of ``filters``, for the trace

    def best_option(self, options: Sequence[Option], ctx: ExpansionContext) -> Option | None:
        remaining = list(options)
        for i, f in enumerate(self.filters):
            ctx.ratings = {}
            remaining = f.best_options(remaining, ctx)
            name = self.names[i] if i < len(self.names) else type(f).__name__
            ctx.trace.append(
                ExpanderStep(name, tuple(o.group for o in remaining), tuple(sorted(ctx.ratings.items())))
            )
            if len(remaining) == 1:
                return remaining[0]
        ctx.ratings = {}
        picked = self.fallback.best_options(remaining, ctx)
        ctx.trace.append(ExpanderStep("random (fallback)", tuple(o.group for o in picked[:1])))
        return picked[0] if picked else None
