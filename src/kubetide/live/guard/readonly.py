"""A shadow's connection refuses every write before it leaves the process: the one rule that makes a
write by ``--shadow`` impossible, not merely skipped.

:func:`read_only_hook` is an httpx request hook, installed on every client a shadow builds (the caches'
and ports', the kwok provider's). A request that is not a read (GET, HEAD, OPTIONS) raises
:class:`WriteRefused` before it is sent, whatever code path made it; the one exception is an Event (created
with ``POST .../events``, or its count raised with ``PATCH .../events/NAME`` as client-go's recorder
does), and only with ``--shadow-events``. Each refusal is counted in
``kubetide_shadow_writes_refused_total{component}`` and logged as an error: a refused write is a bug
in kubetide (the shadow decides without acting), never a choice the loop made.

The gate's shadow mode (:class:`~kubetide.live.guard.gate.WriteGate`, ``shadow=True``) refuses the
ports' writes one level up, with the ports' own errors, so a refused write is reported where it was
asked for; this hook is the floor beneath it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

import httpx2

from kubetide.kube.metrics import SHADOW_WRITES_REFUSED

__all__ = ["READS", "WriteRefused", "read_only_hook"]

log = logging.getLogger("kubetide.shadow")

READS = frozenset({"GET", "HEAD", "OPTIONS"})
# Events, core/v1 or events.k8s.io: the one write a shadow may make, when asked.
_EVENT_CREATE = re.compile(r"^(/api/v1|/apis/events\.k8s\.io/v1(beta1)?)/namespaces/[^/]+/events$")
_EVENT_PATCH = re.compile(r"^(/api/v1|/apis/events\.k8s\.io/v1(beta1)?)/namespaces/[^/]+/events/[^/]+$")


class WriteRefused(Exception):
    """A shadow tried to write: the request was not sent."""


def read_only_hook(component: str, *, allow_events: bool = False) -> Callable[[httpx2.Request], None]:
    """The request hook of a shadow's clients: reads pass, Event creation passes when
    ``allow_events``, anything else raises :class:`WriteRefused`."""

    def hook(request: httpx2.Request) -> None:
        method = request.method.upper()
        if method in READS:
            return
        path = request.url.path
        if allow_events and (
            (method == "POST" and _EVENT_CREATE.match(path))
            or (method == "PATCH" and _EVENT_PATCH.match(path))
        ):
            return
        SHADOW_WRITES_REFUSED.labels(component=component).inc()
        log.error("shadow: write refused (never sent): %s %s", method, path)
        raise WriteRefused(f"a shadow writes nothing: {method} {path} was not sent")

    return hook
