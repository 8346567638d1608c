"""Logging for the node agent: ``--logging-format text`` (one readable line) or ``json`` (one object a
line, as klog's JSON format: ``ts``, ``level``, ``msg``, ``logger``).

``level`` is the agent's own (``-v``); the libraries underneath (httpx, lightkube, botocore) log at
``library_level`` (WARNING unless ``--library-log-level`` asks), and the handler redacts secrets
(:mod:`kubetide.kube.redaction`) at every level.
"""

from __future__ import annotations

import json
import logging
import sys

from kubetide.kube import redaction

__all__ = ["configure_logging"]


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": record.created,
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info or record.exc_text:
            entry["error"] = record.exc_text or self.formatException(record.exc_info)  # type: ignore[arg-type]
        return json.dumps(entry)


def configure_logging(fmt: str, level: int = logging.INFO, library_level: int = logging.WARNING) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    redaction.install([handler])
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(library_level)
    logging.getLogger("kubetide").setLevel(level)
