"""Cluster Autoscaler's decision core: one subpackage per decision stage, as upstream decomposes it.

``options`` (flags), ``backoff`` (per-group exponential backoff), ``clusterstate`` (the
ClusterStateRegistry: readiness, ranges, health, upcoming nodes, scale-up requests), ``expander``
(choosing among expansion options), ``scaleup`` (balancing, resource limits) and ``scaledown``
(eligibility, unneeded tracking, budgets, cooldown). Pure: ``now`` is always an argument, no module
reads a clock or does I/O; the cloud is reached only through :mod:`kubetide.cloud.provider`. Event and
status reasons are in :mod:`kubetide.cluster.reasons`. The main loop's stages are in ``loop``,
ordered by ``autoscaler``; ``driver`` runs it for the simulator and live mode alike, and ``status``
renders the status ConfigMap.
"""
