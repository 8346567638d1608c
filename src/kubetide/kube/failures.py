"""How live mode reports a failure it expects (an API outage, a cloud error, a loop that failed): one
line naming the cause, the traceback only at ``-v=4`` and up (debug level), where it helps a developer.

A user reading the log of an autoscaler whose API server restarted wants "the API server refused the
connection", not forty lines of stack; a developer chasing a bug runs with ``--v=4`` and gets both.
"""

from __future__ import annotations

import logging

__all__ = ["LoopFailed", "describe", "log_failure"]


class LoopFailed(Exception):
    """A loop that failed as a whole for a reason it reports (the message): not a bug. Raised by a
    reporter (e.g. the cloud provider could not be refreshed during an API outage); the live runtime
    logs it as one line and counts it in ``kubetide_loop_errors_total``."""


def describe(exc: BaseException) -> str:
    """The failure in one line. kubetide's own errors say what failed in their message (``503
    ServiceUnavailable: ...``, ``failed to refresh cloud provider: ...``); others get their type too,
    since a bare ``[Errno 111] Connection refused`` or ``'x'`` does not say what it is."""
    text = " ".join(str(exc).split())
    if text and type(exc).__module__.startswith("kubetide."):
        return text
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def log_failure(
    logger: logging.Logger, message: str, exc: BaseException, level: int = logging.WARNING
) -> None:
    """``message: cause`` on one line; with the traceback when ``logger`` logs debug (``-v>=4``)."""
    trace = exc if logger.isEnabledFor(logging.DEBUG) else None
    logger.log(level, "%s: %s", message, describe(exc), exc_info=trace)
