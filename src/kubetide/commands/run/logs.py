"""Logging for the live commands: one line per decision, as text or JSON (``--logging-format``).

``-v`` is kubetide's own verbosity, as klog's is CA's: it maps onto the levels of kubetide's loggers
(0-3: INFO, 4 and up: DEBUG), so an upstream Deployment's ``--v=4`` keeps its meaning. The libraries
underneath (botocore, boto3, urllib3, httpx, lightkube, ...) stay at WARNING whatever ``-v`` says;
``--library-log-level`` asks for more. Every handler redacts secrets
(:mod:`kubetide.kube.redaction`), so not even ``--library-log-level=debug`` writes a credential. JSON
lines carry ``ts`` (Unix seconds), ``level``, ``logger``, ``msg`` and any ``extra`` fields a caller
passes, for log pipelines that parse them.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, TextIO

from kubetide.cluster.flags import FlagSpec
from kubetide.kube import redaction

__all__ = [
    "LIBRARY_LEVELS",
    "configure_logging",
    "configure_quiet_logging",
    "library_log_level_flag",
    "own_level",
]

OWN_LOGGER = "kubetide"
LIBRARY_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
_STANDARD = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


def library_log_level_flag() -> FlagSpec:
    return FlagSpec(
        "library-log-level",
        "string",
        "warning",
        "log level of the libraries underneath (botocore, urllib3, httpx, lightkube), independent of -v; "
        "secrets are redacted at every level",
        choices=tuple(LIBRARY_LEVELS),
    )


def own_level(verbosity: int) -> int:
    """klog's ``-v`` as a level of kubetide's loggers."""
    return logging.DEBUG if verbosity >= 4 else logging.INFO


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info or record.exc_text:
            out["error"] = record.exc_text or self.formatException(record.exc_info)  # type: ignore[arg-type]
        return json.dumps(out, default=str)


def configure_logging(
    fmt: str,
    verbosity: int,
    component: str,
    stream: TextIO | None = None,
    *,
    library_level: str = "warning",
    level: int | None = None,
) -> None:
    """One handler on the root logger (redacting); kubetide's loggers at ``level`` (else from
    ``verbosity``), everything else at ``library_level``."""
    handler = logging.StreamHandler(stream or sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter(f"%(asctime)s %(levelname).1s {component} %(name)s: %(message)s")
        )
    redaction.install([handler])
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(LIBRARY_LEVELS.get(library_level, logging.WARNING))
    logging.getLogger(OWN_LOGGER).setLevel(own_level(verbosity) if level is None else level)


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """stderr as it is when a line is written (a caller, such as a test runner, may swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def configure_quiet_logging() -> None:
    """For the one-shot commands that read a cluster (``hpa explain --cluster``, ``scenario
    from-cluster``): warnings only, on stderr, redacted. Handlers a caller already installed (an
    embedding program, a test runner) are kept and get the redaction instead."""
    root = logging.getLogger()
    if root.handlers:
        redaction.install(root.handlers)
        return
    handler = _CurrentStderr()
    handler.setFormatter(logging.Formatter("kubetide: %(levelname)s %(name)s: %(message)s"))
    redaction.install([handler])
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
