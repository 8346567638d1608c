"""Whether scale-down waits this loop (``isScaleDownInCooldown``, CA spec §7.1).

After a scale-up, a failed deletion or a deletion, CA waits before removing more nodes so that it does
not remove what it just added or pile deletions on a struggling cloud. The unneeded timers keep running
meanwhile. The three timestamps start at CA's start minus one hour.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ScaleDownTimes", "scale_down_in_cooldown"]


@dataclass(frozen=True, slots=True)
class ScaleDownTimes:
    last_scale_up: float
    last_scale_down_fail: float
    last_scale_down_delete: float

    @classmethod
    def at_start(cls, start: float) -> ScaleDownTimes:
        return cls(start - 3600.0, start - 3600.0, start - 3600.0)


def scale_down_in_cooldown(
    times: ScaleDownTimes,
    now: float,
    *,
    delay_after_add: float,
    delay_after_failure: float,
    delay_after_delete: float,
    disabled_this_loop: bool = False,
    delay_type_local: bool = False,
) -> bool:
    if disabled_this_loop:
        return True
    if delay_type_local:
        # The delays are applied per node group by a candidates processor instead.
        return False
    return (
        times.last_scale_up + delay_after_add > now
        or times.last_scale_down_fail + delay_after_failure > now
        or times.last_scale_down_delete + delay_after_delete > now
    )
