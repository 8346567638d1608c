"""Whether a URL given on the command line can be the HTTP service it names (Prometheus, a running
kubetide's ``--address``): checked at start, so a typo exits 2 rather than failing every request later."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["http_url_problem"]


def http_url_problem(url: str, example: str, what: str) -> str | None:
    """Why ``url`` cannot be ``what`` (``http(s)://host[:port][/prefix]``, like ``example``), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError when the port is not a number in range
    except ValueError as exc:
        return f"must be an http:// or https:// URL like {example} ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"must be an http:// or https:// URL like {example}"
    if parts.query or parts.fragment:
        return f"must be {what}, without a query or fragment"
    del port
    return None
