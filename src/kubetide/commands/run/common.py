"""Start-up steps every ``kubetide run`` component shares: bad input out (exit 2), the connection, the
caches (waiting for the API server with backoff rather than failing when it is not up yet)."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import NoReturn, Protocol, TypeVar

from kubetide.kube.client import KubeAccessError, RequestHook, make_http_client
from kubetide.kube.discovery import DiscoveryError, ServedVersions, discover
from kubetide.kube.rest import Backoff, KubeStatusError, Rest
from kubetide.model.errors import FieldError

__all__ = ["EXIT_INVALID", "connect", "exit_invalid", "file_problems", "start_caches"]

EXIT_INVALID = 2
log = logging.getLogger("kubetide.run")


class Caches(Protocol):
    def start(self) -> object: ...

    def wait_synced(self, timeout: float) -> bool: ...

    def stop(self) -> None: ...


C = TypeVar("C", bound=Caches)


def exit_invalid(component: str, problems: Sequence[tuple[str, str]]) -> NoReturn:
    """Every problem of the command line or a config file, then exit 2 (never a traceback)."""
    count = len(problems)
    print(f"kubetide run {component}: {count} problem{'s' if count != 1 else ''}:", file=sys.stderr)
    for where, what in problems:
        flag = where if where.startswith("-") or ":" in where or "." in where else f"--{where}"
        print(f"  {flag}: {what}", file=sys.stderr)
    sys.exit(EXIT_INVALID)


def file_problems(flag: str, errors: Iterable[FieldError]) -> list[tuple[str, str]]:
    """A config file's problems under the flag that named the file (``--cloud-config: nodeGroups[0]...``);
    a problem that names its own flag (``--nodes=...``) keeps it, so no prefix is printed twice."""
    return [(e.path, e.message) if e.path.startswith("-") else (flag, str(e)) for e in errors]


def connect(component: str, kubeconfig: str | None, on_request: RequestHook | None = None) -> Rest:
    """The API connection; ``on_request`` sees each request before it is sent (a shadow's read-only
    rule)."""
    try:
        return Rest(make_http_client(kubeconfig, on_request=on_request))
    except KubeAccessError as exc:
        print(f"kubetide run {component}: {exc}", file=sys.stderr)
        sys.exit(1)


def start_caches(
    component: str, rest: Rest, stop: threading.Event, build: Callable[[ServedVersions], C]
) -> tuple[ServedVersions, C | None]:
    """Discover the served versions and fill the caches; (versions, None) when ``stop`` came first.

    An API server that is down or still starting is waited for with backoff (as client-go's informers
    do), logged once per attempt: a process started before its control plane comes up on its own.
    """
    backoff = Backoff(base=1.0, cap=30.0)
    while True:
        try:
            versions = discover(rest)
            break
        except (KubeStatusError, DiscoveryError) as exc:
            delay = backoff.next()
            log.warning("%s: cannot discover the API (%s); retrying in %.0fs", component, exc, delay)
            if stop.wait(delay):
                return ServedVersions(), None
    caches = build(versions)
    caches.start()
    while not caches.wait_synced(1.0):
        if stop.is_set():
            caches.stop()
            return versions, None
    log.info("%s: caches synced", component)
    return versions, caches
