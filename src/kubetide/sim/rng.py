"""Random streams for the simulation: one independent, deterministic ``numpy`` generator per component.

Streams are keyed by name (``"cloud/spot-a"``, ``"traffic/Deployment/default/web"``), not by the order in
which components ask for them, so adding a component does not change the draws of the others. A name
maps to a 64-bit key with a stable hash (Python's ``hash`` is salted per process).
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["RngFactory", "deterministic_phase", "name_key"]


def name_key(name: str) -> int:
    """A 64-bit integer for ``name``, the same in every process and on every platform."""
    return int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest(), "big")


class RngFactory:
    """Generators derived from one seed: ``stream(name)`` is the same object for the same name."""

    def __init__(self, seed: int) -> None:
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        self.seed = seed
        self._streams: dict[str, np.random.Generator] = {}

    def stream(self, name: str) -> np.random.Generator:
        """The generator for ``name``; repeated calls continue the same stream."""
        generator = self._streams.get(name)
        if generator is None:
            generator = self.fresh(name)
            self._streams[name] = generator
        return generator

    def fresh(self, name: str) -> np.random.Generator:
        """A new generator for ``name`` at the start of its stream (e.g. after a restart)."""
        return np.random.default_rng(np.random.SeedSequence(entropy=self.seed, spawn_key=(name_key(name),)))


def deterministic_phase(seed: int, name: str, period: float) -> float:
    """A phase in ``[0, period)`` for a periodic process: spread like real controllers, but reproducible."""
    fraction = name_key(f"{seed}/phase/{name}") / 2**64
    return fraction * period
