"""Fake, unique IP addresses for the pods and nodes the agent runs (no network behind them).

Addresses only need to be unique among live objects (Endpoints and the HPA key nothing on them, but
tools display them): a counter walks the range and skips addresses in use, so an agent restarting with
pods already addressed never hands out a duplicate.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

__all__ = ["NODE_NETWORK", "POD_NETWORK", "AddressPool"]

POD_NETWORK = "10.244.0.0/16"
NODE_NETWORK = "10.255.0.0/16"


class AddressPool:
    def __init__(self, network: str) -> None:
        net = ipaddress.ip_network(network)
        self._base = int(net.network_address)
        self._size = net.num_addresses
        self._next = 1  # skip the network address

    def allocate(self, in_use: Iterable[str]) -> str:
        used = set(in_use)
        for _ in range(self._size - 2):
            offset = self._next
            self._next = self._next + 1 if self._next + 1 < self._size - 1 else 1
            address = str(ipaddress.ip_address(self._base + offset))
            if address not in used:
                return address
        raise RuntimeError("address pool exhausted")
