"""The simulated machines: one mutable record per instance, and how instances are named and addressed.

Names are chosen to be readable and stable: the n-th instance of group ``spot-a`` runs the Node
``spot-a-<n>`` with InternalIP ``10.<group index>.<n / 256>.<n % 256>`` whatever the seed; only the
AWS-like instance id (``i-`` and 17 hex digits) is drawn from the group's seeded stream, as real ids are
opaque. The providerID is ``sim:///<zone>/<instance id>`` and is also the port's ``Instance.id``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from kubetide.clock import Event
from kubetide.cloud.instance import Instance, InstanceErrorInfo, InstanceState, InstanceStatus
from kubetide.sim.cloud.listener import NodeAddress

__all__ = ["InstanceNamer", "SimInstance", "node_name", "parse_provider_id", "provider_id"]

PROVIDER_SCHEME = "sim://"


def provider_id(zone: str, short_id: str) -> str:
    return f"{PROVIDER_SCHEME}/{zone}/{short_id}"


@functools.lru_cache(maxsize=1 << 16)
def parse_provider_id(value: str) -> str | None:
    """The instance id in a ``sim:///<zone>/<id>`` providerID; None for empty or foreign ids (kept:
    every loop asks again for every node)."""
    prefix = f"{PROVIDER_SCHEME}/"
    if not value.startswith(prefix):
        return None
    _, _, short_id = value[len(prefix) :].rpartition("/")
    return short_id or None


@dataclass(eq=False)
class SimInstance:
    """One machine, from its request to its termination. Times are simulated seconds."""

    short_id: str
    provider_id: str
    group: str
    node_name: str
    addresses: tuple[NodeAddress, ...]
    requested_at: float
    state: InstanceState = InstanceState.Creating
    error_info: InstanceErrorInfo | None = None
    running_at: float | None = None  # billing starts here
    terminated_at: float | None = None  # and ends here
    has_node: bool = False  # a Node object for it exists in the cluster
    node_ready: bool = False
    ever_registered: bool = False
    pending: Event | None = field(default=None, repr=False)  # the next lifecycle step, cancellable
    _shown: Instance | None = field(default=None, repr=False)  # the last to_instance(), while current

    def to_instance(self) -> Instance:
        """The cloud API's view; kept while the state and error are the same (the rest never changes)."""
        shown = self._shown
        status = shown.status if shown is not None else None
        if (
            shown is None
            or status is None
            or status.state is not self.state
            or status.error_info != self.error_info
        ):
            shown = self._shown = Instance(
                self.provider_id,
                InstanceStatus(self.state, self.error_info),
                tuple(a.address for a in self.addresses),
                self.requested_at,
            )
        return shown

    def up_seconds(self, now: float) -> float:
        """Billed seconds up to ``now``: from running to terminated (never counted twice)."""
        if self.running_at is None or self.running_at > now:
            return 0.0
        end = now if self.terminated_at is None else min(self.terminated_at, now)
        return max(0.0, end - self.running_at)

    def cancel_pending(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None


def node_name(group: str, n: int) -> str:
    """The Node name of a group's ``n``-th instance (from 1): its ``initialSize`` nodes are the first
    ones, so a scenario can bind a pod to one of them (``spec.nodeName``)."""
    return f"{group}-{n}"


class InstanceNamer:
    """Allocates ids, Node names and addresses for one group; ids are unique across the cloud."""

    def __init__(self, group: str, group_index: int, zone: str, rng: np.random.Generator, taken: set[str]):
        self._group = group
        self._index = group_index
        self._zone = zone
        self._rng = rng
        self._taken = taken  # shared by every group's namer
        self._count = 0

    def next(self) -> tuple[str, str, str, tuple[NodeAddress, ...]]:
        """``(short id, providerID, node name, addresses)`` for the next instance."""
        self._count += 1
        short_id = self._draw_id()
        name = node_name(self._group, self._count)
        n = self._count
        ip = f"10.{self._index % 256}.{(n >> 8) & 255}.{n & 255}"
        addresses = (NodeAddress("InternalIP", ip), NodeAddress("Hostname", name))
        return short_id, provider_id(self._zone, short_id), name, addresses

    def _draw_id(self) -> str:
        while True:
            short_id = "i-" + self._rng.bytes(9).hex()[:17]
            if short_id not in self._taken:
                self._taken.add(short_id)
                return short_id
