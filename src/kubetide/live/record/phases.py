"""When the recorded autoscalers' loops ran, so the replay's loops run then too.

Live loops run at ``their start + k x period`` (:mod:`kubetide.kube.loop`), so within a recording each
has a phase: where in its period its loops fall, from the recording's start. A replay whose cluster
autoscaler looks at the cluster 7 s later than the recorded one did decides 7 s later, and a pod waits
7 s longer: the phase is part of what happened.

- The cluster autoscaler writes its status ConfigMap at every loop, stamped with the loop's time
  (``cluster-autoscaler.kubernetes.io/last-updated``, to the nanosecond): each new stamp is one
  observation.
- The HPA controller's Events (rescales, failed metrics: written during syncs) are stamped to the
  second: each is an observation of a sync within that second (its middle is taken).

The phase is the median of the observations, each taken relative to the first (so that loops around
the end of the period, 9.9 s and 0.1 s of 10 s, count as neighbours, not as opposites).
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime

__all__ = ["PhaseEstimate", "parse_last_updated"]

_KEPT = 200


def parse_last_updated(text: str) -> float | None:
    """CA's ``ConfigMapLastUpdateFormat`` (``2006-01-02 15:04:05.999999999 -0700 MST``) as Unix seconds."""
    parts = text.split()
    if len(parts) < 2:
        return None
    date, clock = parts[0], parts[1]
    whole, _, fraction = clock.partition(".")
    try:
        when = datetime.strptime(f"{date} {whole}", "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    offset = 0.0
    if len(parts) >= 3 and parts[2] not in ("+0000", "-0000"):
        sign = -1 if parts[2].startswith("-") else 1
        digits = parts[2].lstrip("+-")
        if len(digits) == 4 and digits.isdigit():
            offset = sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    digits = "".join(c for c in fraction if c.isdigit())
    return when.timestamp() - offset + (int(digits) / 10 ** len(digits) if digits else 0.0)


@dataclass
class PhaseEstimate:
    """Observations of one loop's times (seconds from the recording's start) with a ``period``."""

    period: float
    observed: deque[float] = field(default_factory=lambda: deque(maxlen=_KEPT))
    _last: float | None = None

    def observe(self, t: float) -> None:
        if t < 0 or t == self._last:
            return  # before the recording (its timeline starts at 0), or the stamp already seen
        self._last = t
        self.observed.append(t % self.period)

    def phase(self) -> float | None:
        if not self.observed or self.period <= 0:
            return None
        reference = self.observed[0]
        half = self.period / 2
        offsets = [((o - reference + half) % self.period) - half for o in self.observed]
        return round((reference + statistics.median(offsets)) % self.period, 3)
