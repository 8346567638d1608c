"""The cluster's resource usage (``--cores-total``, ``--memory-total``, ``--gpu-total``) is the sum of
what each node counts for, however the nodes' capacities repeat."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubetide.cluster.scaleup.limits import CORES, NODES, ResourceLimits, node_resources
from kubetide.model.node import NodeView
from kubetide.model.resources import MEMORY, Resources

_CAPACITIES = st.builds(
    lambda cpu, mem, gpu: Resources({"cpu": cpu, "memory": mem, "nvidia.com/gpu": gpu}),
    st.sampled_from([0, 999, 1000, 1001, 4000]),
    st.sampled_from([0, 1, 2**30]),
    st.integers(0, 2),
)


@given(st.lists(_CAPACITIES, max_size=12), st.booleans())
def test_usage_is_the_sum_of_every_node(capacities: list[Resources], gpus: bool) -> None:
    maximum = {CORES: 10**6, MEMORY: 10**15, **({"nvidia.com/gpu": 8} if gpus else {})}
    limits = ResourceLimits({}, maximum)
    nodes = [NodeView(f"n{i}", capacity=c) for i, c in enumerate(capacities)]
    extras = ["nvidia.com/gpu"] if gpus else []
    expected: dict[str, int] = {}
    for node in nodes:
        for r, v in node_resources(node, extras).items():
            expected[r] = expected.get(r, 0) + v
    usage = limits.usage(nodes)
    assert usage == expected
    assert usage.get(NODES, 0) == len(nodes)
