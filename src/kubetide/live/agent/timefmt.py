"""Kubernetes' two timestamp formats: ``Time`` (whole seconds) and ``MicroTime`` (six fractional digits,
which Leases require: the API server rejects a MicroTime without them), and their parsing."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["format_micro_time", "format_time", "parse_time"]


def format_time(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: object) -> float | None:
    """Seconds since the epoch for an RFC 3339 timestamp; None when absent or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
