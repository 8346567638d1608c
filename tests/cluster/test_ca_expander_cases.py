"""``expander_*`` cases: each strategy, the price expander's helpers, and the chain."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from ca_cases import cases

from kubetide.cloud.instance import CloudProviderError
from kubetide.cluster.expander import (
    ExpanderDependencies,
    ExpanderError,
    ExpansionContext,
    Option,
    build_strategy,
)
from kubetide.cluster.expander.chain import ChainStrategy
from kubetide.cluster.expander.leastnodes import LeastNodesFilter
from kubetide.cluster.expander.mostpods import MostPodsFilter
from kubetide.cluster.expander.price import (
    PriceFilter,
    preferred_node_resources,
    price_score,
    simple_node_unfitness,
)
from kubetide.cluster.expander.priority import PriorityFilter
from kubetide.cluster.expander.waste import LeastWasteFilter, waste_score
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources


def _pod(name: str, cpu: int = 0, mem: int = 0) -> Pod:
    return Pod(name, containers=(Container("c", Resources({"cpu": cpu, "memory": mem})),))


def _node(name: str, cpu: int, mem: int = 0, labels: dict[str, str] | None = None) -> NodeView:
    cap = Resources({"cpu": cpu, "memory": mem})
    return NodeView(name, labels=dict(labels or {}), allocatable=cap, capacity=cap)


@pytest.mark.parametrize("case", cases("expander_least_waste"))
def test_least_waste(case: dict[str, Any]) -> None:
    options = [
        Option(
            o["group"],
            o["node_count"],
            tuple(_pod(f"p{i}", p["cpu_m"], p["mem_bytes"]) for i, p in enumerate(o["pods"])),
            _node(o["group"], o["capacity"]["cpu_m"], o["capacity"]["mem_bytes"]),
        )
        for o in case["input"]["options"]
    ]
    best = LeastWasteFilter().best_options(options, ExpansionContext())
    assert [o.group for o in best] == case["expected"]["best"]
    assert {o.group: waste_score(o) for o in options} == pytest.approx(case["expected"]["scores"])


@dataclass
class FakePricing:
    nodes: dict[str, float]
    pods: dict[str, float]

    def node_price(self, node: NodeView, start: float, end: float) -> float:
        if node.name not in self.nodes:
            raise CloudProviderError(f"no price for {node.name}")
        return self.nodes[node.name]

    def pod_price(self, pod: Pod, start: float, end: float) -> float:
        if pod.name not in self.pods:
            raise CloudProviderError(f"no price for {pod.name}")
        return self.pods[pod.name]


@pytest.mark.parametrize("case", cases("expander_price"))
def test_price(case: dict[str, Any]) -> None:
    inp = case["input"]
    pricing = FakePricing(inp["node_prices"], inp["pod_prices"])
    preferred = Resources({"cpu": inp.get("preferred_node_cpu_m", 1000)})
    options = [
        Option(
            o["group"],
            o.get("node_count", 1),
            tuple(_pod(p) for p in o.get("pods", ())),
            _node(o.get("node", o["group"]), o.get("node_capacity_cpu_m", 1000)),
            exists=o.get("exists", True),
        )
        for o in inp["options"]
    ]
    f = PriceFilter(pricing, preferred_node=lambda n: preferred)
    assert [o.group for o in f.best_options(options, ExpansionContext())] == case["expected"]["best"]
    for group, score in case["expected"].get("scores_rounded", {}).items():
        option = next(o for o in options if o.group == group)
        got = price_score(option, pricing, preferred, 0.0, None)
        assert got is not None and round(got, 4) == score


@pytest.mark.parametrize("case", cases("expander_price_preferred_node"))
def test_price_preferred_node(case: dict[str, Any]) -> None:
    got = preferred_node_resources(case["input"]["cluster_node_count"])
    assert got["cpu"] == case["expected"]["preferred_cpu_cores"] * 1000


@pytest.mark.parametrize("case", cases("expander_price_unfitness"))
def test_price_unfitness(case: dict[str, Any]) -> None:
    inp = case["input"]
    assert (
        simple_node_unfitness(inp["preferred_cpu_m"], inp["evaluated_cpu_m"]) == case["expected"]["unfitness"]
    )


def _yaml(priorities: dict[str, list[str]]) -> str:
    return str(yaml.safe_dump({int(p): rules for p, rules in priorities.items()}))


def _priority_events(ctx: ExpansionContext) -> list[str]:
    return [f"{e.type} {e.reason} {e.message}" for e in ctx.events]


@pytest.mark.parametrize("case", cases("expander_priority"))
def test_priority(case: dict[str, Any]) -> None:
    inp, want = case["input"], case["expected"]
    options = [Option(g, 1) for g in inp["options"]]
    config: dict[str, str] = {}
    f = PriorityFilter(lambda: config)
    if "priorities_first" in inp:
        config["priorities"] = _yaml(inp["priorities_first"])
        ctx = ExpansionContext()
        assert [o.group for o in f.best_options(options, ctx)] == want["best_first"]
        assert _priority_events(ctx) == want["events_first"]
        # The ConfigMap is re-read on every call: an update takes effect at once.
        config["priorities"] = _yaml(inp["priorities_second"])
        assert [o.group for o in f.best_options(options, ExpansionContext())] == want["best_second"]
        return
    config["priorities"] = inp["priorities_raw"] if "priorities_raw" in inp else _yaml(inp["priorities"])
    ctx = ExpansionContext()
    assert [o.group for o in f.best_options(options, ctx)] == want["best"]
    if "event" in want:
        assert _priority_events(ctx) == [want["event"]]


@pytest.mark.parametrize("case", cases("expander_least_nodes"))
def test_least_nodes(case: dict[str, Any]) -> None:
    options = [Option(f"ng{i}", n) for i, n in enumerate(case["input"]["node_counts"])]
    best = LeastNodesFilter().best_options(options, ExpansionContext())
    kept = [options.index(o) for o in best]
    assert kept == (case["expected"]["kept_indices"] or [])


@pytest.mark.parametrize("case", cases("expander_most_pods"))
def test_most_pods(case: dict[str, Any]) -> None:
    options = [
        Option(f"ng{i}", 1, tuple(_pod(f"p{k}") for k in range(n)))
        for i, n in enumerate(case["input"]["pod_counts"])
    ]
    kept = [options.index(o) for o in MostPodsFilter().best_options(options, ExpansionContext())]
    assert kept == case["expected"]["kept_indices"]


@dataclass(frozen=True)
class Substring:
    text: str

    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        return [o for o in options if self.text in o.group]


@pytest.mark.parametrize("case", cases("expander_chain"))
def test_chain(case: dict[str, Any]) -> None:
    # The upstream test's filters and fallback, rebuilt: substring filters, "first containing x" fallback.
    class FirstWithX:
        def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
            return [o for o in options if "x" in o.group][:1]

    chain = ChainStrategy((Substring("a"), Substring("b")), FirstWithX())
    best = chain.best_option([Option(g, 1) for g in case["input"]["options"]], ExpansionContext())
    assert best is not None and best.group == case["expected"]["best"]


def test_expander_flag_rules() -> None:
    assert len(build_strategy("priority,least-waste").filters) == 2
    with pytest.raises(ExpanderError):
        build_strategy("random,least-waste")
    with pytest.raises(ExpanderError):
        build_strategy("least-waste,least-waste")
    with pytest.raises(ExpanderError):
        build_strategy("price")  # no pricing model


def test_price_without_any_price_lets_the_next_expander_decide() -> None:
    pricing = FakePricing({}, {"p": 1.0, "stabilize": 1.0})
    options = [Option(g, 1, (_pod("p"),), _node(g, 1000)) for g in ("small", "big")]
    ctx = ExpansionContext()
    assert PriceFilter(pricing, fall_through=True).best_options(options, ctx) == options
    (event,) = ctx.events
    assert (
        event.reason == "PricesUnavailable"
        and "no price is known for any option (big, small)" in event.message
    )
    chain = build_strategy("price,least-nodes", ExpanderDependencies(pricing=pricing))
    assert chain.filters[0] == PriceFilter(pricing, fall_through=True)


def test_the_chain_records_how_each_filter_rated_each_option() -> None:
    """What ``kubetide explain`` prints: per filter, in --expander order, each option it was given with
    its rating, so a group that lost says why."""
    from kubetide.cluster.expander.option import ExpanderStep
    from kubetide.cluster.explain import Explanation, render_text

    pods = (_pod("a", 1000, 2**30), _pod("b", 1000, 2**30))
    options = [
        Option("big", 1, pods, _node("big", 8000, 32 * 2**30)),
        Option("fit", 1, pods, _node("fit", 2000, 2 * 2**30)),
        Option("two", 2, pods, _node("two", 1000, 3 * 2**29)),
        Option("none", 1, pods[:1], None),
    ]
    ctx = ExpansionContext()
    chosen = ChainStrategy(
        (MostPodsFilter(), LeastWasteFilter()), _First(), ("most-pods", "least-waste")
    ).best_option(options, ctx)
    assert chosen is not None and chosen.group == "fit"
    most, waste = ctx.trace
    assert most == ExpanderStep(
        "most-pods",
        ("big", "fit", "two"),
        (("big", "2 pod(s)"), ("fit", "2 pod(s)"), ("none", "1 pod(s)"), ("two", "2 pod(s)")),
    )
    assert waste == ExpanderStep(
        "least-waste", ("fit",), (("big", "waste 1.688"), ("fit", "waste 0"), ("two", "waste 0.3333"))
    )
    text = render_text(Explanation(0.0, "", "", (), {}, tuple(ctx.trace), (), ()))
    assert (
        "expander most-pods: kept big (2 pod(s)), fit (2 pod(s)), two (2 pod(s)); not none (1 pod(s))" in text
    )
    assert "expander least-waste: kept fit (waste 0); not big (waste 1.688), two (waste 0.3333)" in text


@dataclass
class _First:
    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        return list(options[:1])
