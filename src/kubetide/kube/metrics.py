"""kubetide's own Prometheus metrics for the live adapter (``kubetide_`` prefix), in one place.

They live in prometheus_client's default registry, which ``/metrics`` (:mod:`kubetide.kube.http`)
serves. Components add their own metrics (CA's ``cluster_autoscaler_*``) beside their loops.
"""

from __future__ import annotations

from prometheus_client import Counter

__all__ = [
    "API_ERRORS",
    "DRY_RUN_ACTIONS",
    "EVENTS_DROPPED",
    "LOOPS_SKIPPED",
    "LOOP_ERRORS",
    "SHADOW_DISAGREEMENTS",
    "SHADOW_WRITES_REFUSED",
]

API_ERRORS = Counter(
    "kubetide_api_errors",
    "API server requests that failed (each attempt), by resource and reason",
    ["resource", "reason"],
)
DRY_RUN_ACTIONS = Counter(
    "kubetide_dry_run_actions",
    "Writes a dry run would have made, by component and action",
    ["component", "action"],
)
EVENTS_DROPPED = Counter(
    "kubetide_events_dropped",
    "Events that could not be written (best effort, as client-go's recorder)",
    ["component"],
)
LOOP_ERRORS = Counter(
    "kubetide_loop_errors",
    "Periodic loop iterations that raised (the loop goes on)",
    ["loop"],
)
LOOPS_SKIPPED = Counter(
    "kubetide_loops_skipped",
    "Loops not run, by component and reason (cacheNotSynced: a watch broke and a cache the loop reads "
    "has not listed again)",
    ["component", "reason"],
)
SHADOW_DISAGREEMENTS = Counter(
    "kubetide_shadow_disagreements",
    "A shadow's disagreements with the autoscaler that acts, by component and kind",
    ["component", "kind"],
)
SHADOW_WRITES_REFUSED = Counter(
    "kubetide_shadow_writes_refused",
    "Writes a shadow attempted and its connection refused before sending (a bug: a shadow only reads)",
    ["component"],
)
