"""What the running autoscaler did between two looks at the cluster: a pure difference.

A look (:class:`ClusterLook`) holds each node group's target as the provider reports it (an ASG's
desired capacity, the kwok provider's shared target), the nodes of each group, and the nodes being
removed (CA's ``ToBeDeletedByClusterAutoscaler`` taint, Escalator's removal taint). Between two looks:

- a target that rose is a scale-up (by how much, from what);
- a node that was there and is now being removed, or gone, is a deletion (``DELETE``);
- with ``group_scale_downs`` (Escalator, which decides to remove "n nodes of a group" and taints them,
  deleting them minutes later), the nodes of a group newly being removed are one scale-down of the
  group by that many, and nodes are not named.

The action's time is the look's: the precision is the shadow's loop period.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubetide.live.shadow.compare import DELETE, SCALE_DOWN, SCALE_UP, Action

__all__ = ["ClusterLook", "running_actions"]


@dataclass(frozen=True, slots=True)
class ClusterLook:
    at: float
    targets: Mapping[str, int] = field(default_factory=dict)  # group -> target size
    nodes: Mapping[str, str] = field(default_factory=dict)  # node -> group, not being removed
    removing: Mapping[str, str] = field(default_factory=dict)  # node -> group, being removed


def running_actions(
    before: ClusterLook | None, after: ClusterLook, *, group_scale_downs: bool = False
) -> tuple[Action, ...]:
    """The actions between ``before`` and ``after`` (none at the first look), groups and nodes in name
    order."""
    if before is None:
        return ()
    out: list[Action] = []
    for group in sorted(after.targets):
        was, now = before.targets.get(group), after.targets[group]
        if was is not None and now > was:
            out.append(Action(SCALE_UP, group, group, after.at, amount=now - was, size=was))
    if group_scale_downs:
        newly: dict[str, int] = {}
        for node, group in after.removing.items():
            if node not in before.removing:
                newly[group] = newly.get(group, 0) + 1
        for group in sorted(newly):
            size = before.targets.get(group, -1)
            out.append(Action(SCALE_DOWN, group, group, after.at, amount=newly[group], size=size))
    else:
        for node in sorted(before.nodes):
            if node not in after.nodes:
                group = after.removing.get(node, before.nodes[node])
                out.append(Action(DELETE, node, group, after.at))
    return tuple(out)
