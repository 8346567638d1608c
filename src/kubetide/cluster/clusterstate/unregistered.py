"""Which long-unregistered instances to delete this loop (``removeOldUnregisteredNodes``, CA spec §2.9).

An instance that never registered within the provision time is broken; deleting it frees the slot so
the group can try again. Without ``--force-delete-unregistered-nodes`` the group never goes below its
min size this way.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["UnregisteredNode", "unregistered_to_delete"]


@dataclass(frozen=True, slots=True)
class UnregisteredNode:
    """A cloud instance with no Node (CA builds a fake node named after the instance id)."""

    instance_id: str
    group: str
    since: float
    # kubetide: not launched by this autoscaler (there when it first looked at the group, or appeared
    # while none of its scale-ups was in flight) and never seen as a Node: perhaps no Kubernetes
    # machine at all; or the cloud reports it out of service (AWS Standby, Detaching, a warm pool).
    # Either way it is not terminated as "unregistered" unless a flag says so.
    foreign: bool = False


def unregistered_to_delete(
    nodes: list[UnregisteredNode],
    target: int,
    min_size: int,
    now: float,
    max_node_provision_time: float,
    force: bool = False,
) -> list[UnregisteredNode]:
    """The group's long-unregistered instances to delete, capped at ``target - min`` unless forced."""
    old = [n for n in nodes if n.since + max_node_provision_time < now]
    if not force:
        room = target - min_size
        if room <= 0:
            return []
        old = old[:room]
    return old
