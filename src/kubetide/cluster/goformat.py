"""Go's ``time.Duration.String()``, because CA's messages print durations that way (``3m0s``, ``2m1s``).

Messages such as "Scale-up timed out for node group ng1 after 3m0s" are compared verbatim by users'
alerting, so the port reproduces Go's format rather than Python's.
"""

from __future__ import annotations

__all__ = ["go_duration"]


def _trim(fraction: str) -> str:
    fraction = fraction.rstrip("0")
    return f".{fraction}" if fraction else ""


def go_duration(seconds: float) -> str:
    """``seconds`` as Go prints a Duration: ``0s``, ``1.5s``, ``2m1s``, ``1h0m0s``, ``500ms``."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        # Below one second Go switches to the largest unit that keeps an integer part.
        for unit, scale in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= scale:
                whole, rest = divmod(ns, scale)
                digits = len(str(scale)) - 1
                return f"{sign}{whole}{_trim(str(rest).zfill(digits)) if digits else ''}{unit}"
    whole_s, frac_ns = divmod(ns, 1_000_000_000)
    hours, rem = divmod(whole_s, 3600)
    minutes, secs = divmod(rem, 60)
    text = f"{secs}{_trim(str(frac_ns).zfill(9))}s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return f"{sign}{text}"
