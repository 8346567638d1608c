"""Expanders: which expansion option (node group and node count) a scale-up takes (CA spec §6.4).

Each strategy is its own module; :data:`EXPANDERS` maps ``--expander`` names to factories, and
:func:`build_strategy` turns the comma-separated flag into a :class:`~.chain.ChainStrategy`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kubetide.cloud.instance import NotImplementedByProvider
from kubetide.cloud.provider import PricingModel
from kubetide.cluster.expander.chain import ChainStrategy
from kubetide.cluster.expander.leastnodes import LeastNodesFilter
from kubetide.cluster.expander.mostpods import MostPodsFilter
from kubetide.cluster.expander.option import ExpanderStep, ExpansionContext, Filter, Option
from kubetide.cluster.expander.price import PriceFilter
from kubetide.cluster.expander.priority import PriorityFilter
from kubetide.cluster.expander.random import RandomFilter
from kubetide.cluster.expander.waste import LeastWasteFilter

__all__ = [
    "EXPANDERS",
    "ChainStrategy",
    "ExpanderDependencies",
    "ExpanderError",
    "ExpanderStep",
    "ExpansionContext",
    "Filter",
    "Option",
    "build_strategy",
]


class ExpanderError(ValueError):
    """An ``--expander`` value CA would refuse at startup."""


@dataclass(frozen=True, slots=True)
class ExpanderDependencies:
    """What strategies need from outside: prices (None: not offered), the priority ConfigMap reader."""

    pricing: PricingModel | None = None
    priority_config_map: Callable[[], Mapping[str, str] | None] = field(default=lambda: None)
    gpu_label: str | None = None
    # When no option has a price, pass them all to the next expander (kubetide) rather than none (CA).
    price_fall_through: bool = True


def _price(deps: ExpanderDependencies) -> Filter:
    if deps.pricing is None:
        # CA exits at startup when the price expander has no pricing model.
        raise ExpanderError("the price expander needs CloudProvider.Pricing(), which is not implemented")
    return PriceFilter(deps.pricing, gpu_label=deps.gpu_label, fall_through=deps.price_fall_through)


def _grpc(deps: ExpanderDependencies) -> Filter:
    raise ExpanderError("the grpc expander needs a gRPC client; kubetide does not provide one")


EXPANDERS: dict[str, Callable[[ExpanderDependencies], Filter]] = {
    "random": lambda deps: RandomFilter(),
    "most-pods": lambda deps: MostPodsFilter(),
    "least-waste": lambda deps: LeastWasteFilter(),
    "least-nodes": lambda deps: LeastNodesFilter(),
    "price": _price,
    "priority": lambda deps: PriorityFilter(deps.priority_config_map),
    "grpc": _grpc,
}


def build_strategy(names: str | tuple[str, ...], deps: ExpanderDependencies | None = None) -> ChainStrategy:
    """The chain for ``--expander`` (e.g. ``"priority,least-waste"``), with random as the fallback."""
    deps = deps or ExpanderDependencies()
    if isinstance(names, str):
        names = tuple(n.strip() for n in names.split(",") if n.strip())
    if not names:
        raise ExpanderError("--expander must name at least one strategy")
    seen: set[str] = set()
    filters = []
    for i, name in enumerate(names):
        if name not in EXPANDERS:
            raise ExpanderError(f"Expander {name} not supported")
        if name in seen:
            raise ExpanderError(
                f"Expander {name} was specified multiple times, each expander must not be repeated"
            )
        if name == "random" and i != len(names) - 1:
            raise ExpanderError(
                "Expander random must be the last one in the list, it always returns one option"
            )
        seen.add(name)
        try:
            filters.append(EXPANDERS[name](deps))
        except NotImplementedByProvider as exc:
            raise ExpanderError(str(exc)) from None
    return ChainStrategy(tuple(filters), RandomFilter(), names)
