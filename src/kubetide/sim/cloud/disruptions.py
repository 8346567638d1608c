"""Disruptions of running machines: the ``nodeNotReady`` fault and the ``deleteNode`` scenario action.

Which nodes are hit is drawn from the group's seeded stream among candidates in creation order, so a
seed picks the same nodes every run.
"""

from __future__ import annotations

import math
from functools import partial

from kubetide.clock import VirtualClock
from kubetide.sim.cloud.faults import NotReadyWindow
from kubetide.sim.cloud.group import SimGroup
from kubetide.sim.cloud.instances import SimInstance

__all__ = ["arm_not_ready_faults", "delete_node_objects", "pick"]


def pick(group: SimGroup, candidates: list[SimInstance], count: int) -> list[SimInstance]:
    """``count`` of ``candidates`` (all if fewer), drawn from the group's stream, in creation order."""
    if count >= len(candidates):
        return list(candidates)
    chosen = group.rng.choice(len(candidates), size=count, replace=False)
    return [candidates[i] for i in sorted(int(i) for i in chosen)]


def arm_not_ready_faults(group: SimGroup, engine: VirtualClock) -> None:
    """Schedule every ``nodeNotReady`` window of the group: at ``at`` its nodes turn NotReady, at
    ``until`` those that still exist turn Ready again."""
    for fault in group.faults.not_ready:
        engine.at(
            max(fault.window.at, engine.now),
            partial(_begin, group, engine, fault),
            name=f"cloud/nodeNotReady/{group.spec.name}",
        )


def _begin(group: SimGroup, engine: VirtualClock, fault: NotReadyWindow, now: float) -> None:
    ready = [i for i in group.live.values() if i.has_node and i.node_ready and i.terminated_at is None]
    hit = pick(group, ready, fault.count)
    for inst in hit:
        group.set_ready(now, inst, False)
    if math.isfinite(fault.window.until):
        engine.at(
            max(fault.window.until, now),
            lambda t: _end(group, hit, t),
            name=f"cloud/nodeNotReady-end/{group.spec.name}",
        )


def _end(group: SimGroup, hit: list[SimInstance], now: float) -> None:
    for inst in hit:
        if inst.has_node and not inst.node_ready and inst.terminated_at is None:
            group.set_ready(now, inst, True)


def delete_node_objects(group: SimGroup, count: int, now: float) -> list[str]:
    """Delete ``count`` Node objects of the group (machines keep running); the deleted Node names."""
    with_node = [i for i in group.live.values() if i.has_node]
    hit = pick(group, with_node, count)
    for inst in hit:
        group.remove_node_object(now, inst)
    return [inst.node_name for inst in hit]
