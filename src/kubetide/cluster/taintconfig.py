"""Taints that need special handling, as CA's ``TaintConfig`` (utils/taints) defines them.

**Startup taints** (``--startup-taint``, the deprecated ``--ignore-taint``, the key prefixes
``startup-taint.cluster-autoscaler.kubernetes.io/`` and ``ignore-taint.cluster-autoscaler.kubernetes.io/``
and any ``--startup-taint-prefix``) are put on a node while it starts and removed once something on it
is ready: a Ready node still carrying one is counted as not ready (an unready copy, as upstream's
``FilterOutNodesWithStartupTaints``), and they never go into a node template, so a group is not
refused for a taint its nodes lose a minute after they join. **Status taints** (``--status-taint``,
the prefix ``status-taint.cluster-autoscaler.kubernetes.io/``) report a state: they are left out of
templates only; the node's readiness is its own.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import compress

from kubetide.model.node import NodeView

_TAINTS = operator.attrgetter("taints")

__all__ = [
    "IGNORE_TAINT_PREFIX",
    "STARTUP_TAINT_PREFIX",
    "STATUS_TAINT_PREFIX",
    "TaintConfig",
    "with_startup_tainted_unready",
]

IGNORE_TAINT_PREFIX = "ignore-taint.cluster-autoscaler.kubernetes.io/"
STARTUP_TAINT_PREFIX = "startup-taint.cluster-autoscaler.kubernetes.io/"
STATUS_TAINT_PREFIX = "status-taint.cluster-autoscaler.kubernetes.io/"


@dataclass(frozen=True)
class TaintConfig:
    startup: frozenset[str] = frozenset()
    status: frozenset[str] = frozenset()
    startup_prefixes: tuple[str, ...] = (IGNORE_TAINT_PREFIX, STARTUP_TAINT_PREFIX)
    status_prefixes: tuple[str, ...] = (STATUS_TAINT_PREFIX,)

    @classmethod
    def from_flags(
        cls,
        startup: Iterable[str] = (),
        ignore: Iterable[str] = (),
        status: Iterable[str] = (),
        startup_prefixes: Iterable[str] = (),
    ) -> TaintConfig:
        """Upstream: StartupTaints = --ignore-taint + --startup-taint; the prefixes add to the built-in ones."""
        return cls(
            startup=frozenset((*ignore, *startup)),
            status=frozenset(status),
            startup_prefixes=(IGNORE_TAINT_PREFIX, STARTUP_TAINT_PREFIX, *startup_prefixes),
        )

    def is_startup(self, key: str) -> bool:
        return key in self.startup or key.startswith(self.startup_prefixes)

    def is_status(self, key: str) -> bool:
        return key in self.status or key.startswith(self.status_prefixes)

    def left_out_of_templates(self, key: str) -> bool:
        return self.is_startup(key) or self.is_status(key)


def with_startup_tainted_unready(nodes: Iterable[NodeView], config: TaintConfig) -> list[NodeView]:
    """The nodes, each Ready one that carries a startup taint replaced by a not-ready copy. Its
    readiness then dates from its creation (upstream's unready copy takes the creation time as the
    condition's transition), so it is NotStarted within ``--max-node-startup-time``, then Unready."""
    out = list(nodes)
    for i in compress(range(len(out)), map(_TAINTS, out)):  # only nodes with taints (found in C)
        n = out[i]
        if n.ready and any(config.is_startup(t.key) for t in n.taints):
            out[i] = replace(n, ready=False)
    return out
