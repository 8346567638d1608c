"""A topology key as the pod index numbers it: every slot's domain (the node's label value), the present
nodes per domain, and whether every domain is one slot's (as hostnames are).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["TopologyKey", "padded"]


class TopologyKey:
    """One topology key: every slot's domain code, the present nodes per domain, and whether every
    domain is one slot's (as hostnames are, so a domain's verdict is that slot's)."""

    __slots__ = (
        "_codes_list",
        "codes",
        "holders",
        "masks",
        "name",
        "nodes",
        "presence",
        "shared",
        "unlabelled",
        "values",
    )

    def __init__(self, name: str, capacity: int) -> None:
        self.name = name
        self.values: dict[str, int] = {}
        self.codes = np.full(capacity, -1, np.int32)
        self.nodes = np.zeros(8, np.int64)  # present slots per domain
        self.holders = np.zeros(8, np.int64)  # slots per domain, present or not
        self.presence = 0  # changes whenever a domain gains its first node or loses its last
        self.shared = 0  # domains held by more than one slot
        self.unlabelled = 0  # slots numbered so far whose node lacks the key
        # Verdict tables gathered over every slot (predicates.domains), and the codes as plain integers
        # (for walks over a few nodes), while the codes are unchanged.
        self.masks: dict[bytes, NDArray[np.bool_]] = {}
        self._codes_list: list[int] | None = None

    def codes_list(self, n: int) -> list[int]:
        """The codes of slots 0 .. ``n - 1`` as plain integers."""
        found = self._codes_list
        if found is None or len(found) != n:
            found = self._codes_list = self.codes[:n].tolist()
        return found

    def assign(self, slot: int, value: str | None) -> int:
        """Number the new slot ``slot`` by its label ``value``: its code."""
        code = self.code(value)
        self.codes[slot] = code
        self.masks.clear()
        self._codes_list = None
        if code < 0:
            self.unlabelled += 1
        else:
            self.holders[code] += 1
            self.shared += int(self.holders[code] == 2)
        return code

    def release(self, slot: int) -> int:
        """Forget slot ``slot``'s code (the slot goes, or is numbered again): the code it had."""
        code = int(self.codes[slot])
        self.codes[slot] = -1
        self.masks.clear()
        self._codes_list = None
        if code < 0:
            self.unlabelled -= 1
        else:
            self.holders[code] -= 1
            self.shared -= int(self.holders[code] == 1)
        return code

    def set_code(self, slot: int, value: str | None) -> tuple[int, int]:
        """Slot ``slot``'s domain is now that of ``value``: the old code and the new."""
        old = int(self.codes[slot])
        if old == self.code(value):
            return old, old
        self.release(slot)
        return old, self.assign(slot, value)

    def count_node(self, code: int, delta: int) -> None:
        if code >= 0:
            before = self.nodes[code]
            self.nodes[code] = before + delta
            if not before or before + delta == 0:
                self.presence += 1

    def code(self, value: str | None) -> int:
        if value is None:
            return -1
        code = self.values.get(value)
        if code is None:
            code = self.values[value] = len(self.values)
            if code >= len(self.nodes):
                self.nodes = padded(self.nodes, 2 * len(self.nodes))
                self.holders = padded(self.holders, 2 * len(self.holders))
        return code

    @property
    def domains(self) -> int:
        return len(self.values)


_G = TypeVar("_G", bound=np.generic)


def padded(array: NDArray[_G], length: int) -> NDArray[_G]:
    """``array`` followed by zeros up to ``length``."""
    out: NDArray[_G] = np.zeros(length, array.dtype)
    out[: len(array)] = array
    return out
