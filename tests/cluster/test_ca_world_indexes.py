"""A world given as a plain pod list decides as the same world given with a source's indexes (each
node's pods, the unbound pods): the loop derives both in one pass over the pods, so what it derives
must be what the ``World`` contract says a source gives."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import Harness, node, pod, template
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.testing.cloud import RecordingCloud

_NODES = ("n1", "n2", "n3")
# Where a pod is: on a node of the world, on a node the world does not list, or on none (pending).
_PLACES = (*_NODES, "elsewhere", "")
_PHASES = ("Running", "Pending", "Succeeded", "Failed")


class _Indexed(Harness):
    """The world as a source that keeps indexes gives it: every index derived plainly from the pods."""

    def world(self) -> World:
        plain = super().world()
        by_node = {
            n.name: [
                p for p in plain.pods if p.node_name == n.name and p.phase not in ("Succeeded", "Failed")
            ]
            for n in plain.nodes
        }
        unbound = [p for p in plain.pods if not p.node_name]
        return replace(plain, pods_by_node=by_node, unbound_pods=unbound)


def _harness(kind: type[Harness], pods: list[tuple[str, int, str]]) -> Harness:
    cloud = RecordingCloud().with_group("g", 0, 10, target=len(_NODES), template=template("g"))
    h = kind(cloud, AutoscalingOptions(scale_down_unneeded_time=60.0))
    for name in _NODES:
        h.add_node(node(name, "g"), "g")
    for k, (place, cpu, phase) in enumerate(pods):
        p = pod(f"p{k}", cpu, node_name=place)
        h.add_pod(replace(p, phase=phase) if place else p)
    return h


def _seen(h: Harness, result: LoopResult) -> tuple[object, ...]:
    return (
        [(e.reason, e.object, e.message) for e in result.events],
        result.scale_up_result,
        result.scale_down_result,
        sorted(result.unneeded),
        list(h.cloud.calls),
        list(h.evicted),
        list(h.taint_calls),
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_PLACES), st.sampled_from([100, 400, 900, 2500]), st.sampled_from(_PHASES)),
        max_size=14,
    )
)
def test_a_pod_list_decides_as_the_indexes_of_a_source(pods: list[tuple[str, int, str]]) -> None:
    plain, indexed = _harness(Harness, pods), _harness(_Indexed, pods)
    for now in (0.0, 10.0, 80.0, 150.0, 220.0):
        assert _seen(plain, plain.run(now)) == _seen(indexed, indexed.run(now))
