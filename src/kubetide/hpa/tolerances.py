"""The tolerance band: a ratio within it means "close enough, keep the current replicas"."""

from __future__ import annotations

from dataclasses import dataclass

from kubetide.hpa.config import HPAConfig
from kubetide.model.hpa import HPA
from kubetide.model.quantity import Quantity


@dataclass(frozen=True, slots=True)
class Tolerances:
    down: float
    up: float

    def within(self, ratio: float) -> bool:
        """Inclusive and asymmetric: ``1-down <= ratio <= 1+up`` (false for NaN), as upstream."""
        return (1.0 - self.down) <= ratio <= (1.0 + self.up)

    def __str__(self) -> str:
        return f"[down:{self.down * 100:.1f}%, up:{self.up * 100:.1f}%]"


def tolerances_for(hpa: HPA, config: HPAConfig) -> Tolerances:
    """The flag value, overridden per direction by ``behavior.*.tolerance`` when the gate is on (always for
    the kubetide resource, which has the fields by definition)."""
    down = up = config.tolerance
    behavior = hpa.behavior
    if behavior is None or not (config.gates.hpa_configurable_tolerance or hpa.is_kubetide):
        return Tolerances(down, up)
    if behavior.scale_down is not None and behavior.scale_down.tolerance is not None:
        down = approximate_float(behavior.scale_down.tolerance)
    if behavior.scale_up is not None and behavior.scale_up.tolerance is not None:
        up = approximate_float(behavior.scale_up.tolerance)
    return Tolerances(down, up)


def approximate_float(q: Quantity) -> float:
    """``Quantity.AsApproximateFloat64``: unscaled integer times a power of ten, in float64 steps.

    Upstream computes ``float64(unscaled) * math.Pow10(exponent)`` from the decimal the text was parsed
    into, so ``"0.35"`` is ``35 * 0.01`` = 0.35000000000000003, not the float literal 0.35.
    """
    unscaled, exponent = q.decimal_parts()
    base = float(unscaled)
    if exponent == 0:
        return base
    return base * _pow10(exponent)


def _pow10(n: int) -> float:
    # Go's math.Pow10 splits the exponent into a multiple of 32 and the rest, from exact tables.
    if 0 <= n <= 308:
        return float(10 ** (32 * (n // 32))) * float(10 ** (n % 32))
    if -323 <= n < 0:
        m = -n
        return float(f"1e-{32 * (m // 32)}") / float(10 ** (m % 32))
    return 0.0 if n < 0 else float("inf")
