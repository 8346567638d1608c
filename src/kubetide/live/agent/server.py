"""The agent's HTTP endpoint: ``/metrics/resource`` (the kubelet's resource metrics) and ``/healthz``.

The standard library's threading server is enough: Prometheus scrapes a few times a minute.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kubetide.model.numbers import is_ascii_digits

__all__ = ["MetricsServer", "parse_address"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def parse_address(address: str) -> tuple[str, int]:
    """``host:port`` (``:port`` means every interface, as Go's listeners read it). ValueError if bad."""
    host, sep, port = address.rpartition(":")
    if not sep or not is_ascii_digits(port) or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected host:port, got {address!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


class MetricsServer:
    """Serves ``render()`` on ``/metrics/resource``; ``port`` is the bound one (useful with port 0)."""

    def __init__(self, address: tuple[str, int], render: Callable[[], str]) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics/resource":
                    self._reply(200, render(), CONTENT_TYPE)
                elif path == "/healthz":
                    self._reply(200, "ok", "text/plain; charset=utf-8")
                else:
                    self._reply(404, "404 page not found\n", "text/plain; charset=utf-8")

            def _reply(self, code: int, body: str, content_type: str) -> None:
                data = body.encode()
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass  # scrapes are not worth a log line each

        self._server = ThreadingHTTPServer(address, Handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
