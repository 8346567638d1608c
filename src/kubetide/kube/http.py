"""The HTTP endpoint of a live command (``--address``): ``/metrics``, ``/health-check`` and the
component's JSON pages (the HPA's ``/debug/hpa``).

``/metrics`` is prometheus_client's registry in the text format, without the ``*_created`` series the
Python client adds to every counter, histogram and summary (Go's client, hence CA, Escalator and
kube-controller-manager, has none: dashboards and recording rules written for them must not see extra
series). ``/health-check`` answers as Cluster
Autoscaler's ``HealthCheck`` does (live contract §1): 200 on a standby replica (monitoring starts when
the replica becomes leader) and before the first loop; 500 when no loop has started within
``--max-inactivity``, none has succeeded within ``--max-failing-time``, or the first loop has not run
within ``--max-startup-time``. The loops report to a :class:`HealthTracker`; the server only reads it.
A JSON page is a function of the query's parameters returning (HTTP status, document); it runs on the
server's thread, so it reads only what the loop publishes whole (a value replaced, never changed).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    disable_created_metrics,
    generate_latest,
)

from kubetide.model.numbers import is_ascii_digits

__all__ = ["HealthTracker", "JsonPage", "StatusServer", "parse_address"]

JsonPage = Callable[[Mapping[str, str]], tuple[int, Any]]


class HealthTracker:
    """What ``/health-check`` judges; loops call :meth:`loop_started` and :meth:`loop_succeeded`."""

    def __init__(
        self,
        *,
        max_inactivity_s: float = 600.0,
        max_failing_s: float = 900.0,
        max_startup_s: float = 1200.0,
    ):
        self.max_inactivity_s, self.max_failing_s = max_inactivity_s, max_failing_s
        self.max_startup_s = max_startup_s
        self._lock = threading.Lock()
        self._monitoring_since: float | None = None
        self._last_started: float | None = None
        self._last_succeeded: float | None = None

    def start_monitoring(self, now: float) -> None:
        """The replica became leader: from now on the loops must run."""
        with self._lock:
            self._monitoring_since, self._last_started, self._last_succeeded = now, None, None

    def stop_monitoring(self) -> None:
        """Standby again (the lease was lost or released): healthy by definition."""
        with self._lock:
            self._monitoring_since = None

    def loop_started(self, now: float) -> None:
        with self._lock:
            self._last_started = now

    def loop_succeeded(self, now: float) -> None:
        with self._lock:
            self._last_succeeded = now

    def check(self, now: float) -> tuple[bool, str]:
        with self._lock:
            since, started, succeeded = self._monitoring_since, self._last_started, self._last_succeeded
        if since is None:
            return True, "OK"
        if started is None:
            if now - since > self.max_startup_s:
                return False, f"Error: no loop started within {self.max_startup_s:g}s of startup"
            return True, "OK"
        if now - started > self.max_inactivity_s:
            return False, f"Error: last activity more than {self.max_inactivity_s:g}s ago"
        if succeeded is None:
            # Before the first success the startup allowance applies too (the first loop may be slow).
            if now - since > max(self.max_failing_s, self.max_startup_s):
                return False, f"Error: no successful run since startup {now - since:g}s ago"
        elif now - succeeded > self.max_failing_s:
            return False, f"Error: last successful run more than {self.max_failing_s:g}s ago"
        return True, "OK"


def parse_address(address: str) -> tuple[str, int]:
    """``host:port``; ``:port`` (CA's ``:8085``) listens on every interface. ValueError when malformed."""
    host, sep, port = address.rpartition(":")
    if not sep or not is_ascii_digits(port) or not 0 <= int(port) <= 65535:
        raise ValueError(f"--address {address!r}: expected host:port or :port")
    return host.strip("[]"), int(port)


class StatusServer:
    """Serves ``/metrics``, ``/health-check`` and the JSON ``pages`` (by path) on a daemon thread;
    :meth:`stop` shuts it down."""

    def __init__(
        self,
        address: str,
        health: HealthTracker,
        *,
        registry: CollectorRegistry = REGISTRY,
        clock: Callable[[], float] = time.time,
        pages: Mapping[str, JsonPage] | None = None,
    ):
        host, port = parse_address(address)
        disable_created_metrics()  # type: ignore[no-untyped-call]  # process-wide, read at each scrape
        json_pages = dict(pages or {})

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                if path == "/metrics":
                    self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
                elif path == "/health-check":
                    ok, message = health.check(clock())
                    self._send(200 if ok else 500, message.encode(), "text/plain; charset=utf-8")
                elif path in json_pages:
                    try:
                        code, document = json_pages[path](dict(parse_qsl(query)))
                        body = json.dumps(document, indent=2).encode() + b"\n"
                    except Exception as exc:  # a page's bug: an answer that says so, not a reset
                        code, body = 500, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode()
                    self._send(code, body, "application/json")
                else:
                    self._send(404, b"not found\n", "text/plain; charset=utf-8")

            def _send(self, code: int, body: bytes, content_type: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # scrapes every few seconds would drown the decision logs

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="http", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> StatusServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5.0)
