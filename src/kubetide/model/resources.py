"""Resource vectors: cpu in millicores, everything else in whole units (bytes, pods, GPUs).

Kubernetes' scheduler compares cpu with ``MilliValue()`` and every other resource with ``Value()``; a
:class:`Resources` stores exactly those integers, so comparisons and sums are exact and cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from kubetide.model.errors import ManifestError
from kubetide.model.quantity import QuantityError, format_milli, parse_quantity

__all__ = ["CPU", "EPHEMERAL_STORAGE", "MEMORY", "PODS", "Resources", "resource_units"]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

INT64_MAX = 2**63 - 1


def resource_units(name: str, quantity: str | int | float) -> int:
    """The integer the scheduler compares for ``name``: millicores for cpu, base units otherwise."""
    q = parse_quantity(quantity)
    return q.milli if name == CPU else q.value


class Resources(Mapping[str, int]):
    """An immutable resource vector; missing names are zero. Supports ``+``, ``-`` and ``fits_in``."""

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[str, int] | Iterable[tuple[str, int]] = ()) -> None:
        data = dict(items)
        self._items: dict[str, int] = {k: v for k, v in data.items() if v != 0}
        self._hash: int | None = None

    @classmethod
    def parse(cls, manifest: Any, path: str = "") -> Resources:
        """From a manifest's ``{cpu: 500m, memory: 1Gi}``; errors name the field and quote the value."""
        if manifest is None:
            return EMPTY
        if not isinstance(manifest, Mapping):
            raise ManifestError.at(path, f"must be a mapping of resource name to quantity, got {manifest!r}")
        out: dict[str, int] = {}
        for name, raw in manifest.items():
            where = f"{path}.{name}" if path else str(name)
            try:
                value = resource_units(str(name), raw)
            except QuantityError as exc:
                raise ManifestError.at(where, str(exc)) from None
            if value < 0:  # the API server's validation: requests, limits, capacity
                raise ManifestError.at(where, f"must be greater than or equal to 0, got {raw!r}")
            if value > INT64_MAX:
                # The scheduling core's vectors are int64, as Kubernetes' MilliValue() is.
                raise ManifestError.at(
                    where,
                    f"too large: at most {INT64_MAX} of the units kubetide counts (milli for cpu), got {raw!r}",
                )
            out[str(name)] = value
        return cls(out)

    def __getitem__(self, key: str) -> int:
        return self._items.get(key, 0)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __add__(self, other: Mapping[str, int]) -> Resources:
        out = dict(self._items)
        for k, v in other.items():
            out[k] = out.get(k, 0) + v
        return Resources(out)

    def __sub__(self, other: Mapping[str, int]) -> Resources:
        out = dict(self._items)
        for k, v in other.items():
            out[k] = out.get(k, 0) - v
        return Resources(out)

    def max_with(self, other: Mapping[str, int]) -> Resources:
        """Element-wise maximum (how init containers combine with the app containers)."""
        out = dict(self._items)
        for k, v in other.items():
            out[k] = max(out.get(k, 0), v)
        return Resources(out)

    def fits_in(self, free: Mapping[str, int]) -> bool:
        """True when every requested amount is at most what ``free`` offers."""
        return all(v <= free.get(k, 0) for k, v in self._items.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Resources):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == {k: v for k, v in other.items() if v != 0}
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"Resources({self.to_manifest()})"

    def to_manifest(self) -> dict[str, str]:
        """Back to quantity strings, cpu as ``500m``/``2``, the rest as plain integers."""
        return {k: (format_milli(v) if k == CPU else str(v)) for k, v in sorted(self._items.items())}


EMPTY = Resources()
