"""kubetide's Kubernetes client infrastructure: what every live adapter shares, specific to no autoscaler.

It knows no autoscaler and no decision core (of kubetide it imports only :mod:`kubetide.model`); the
live wing (:mod:`kubetide.live`) builds each autoscaler's adapters on it. Client types (lightkube,
httpx2) stay inside it and the live wing: the cores see only kubetide's own views.

- :mod:`~kubetide.kube.client`: cluster access in kubectl's order; lightkube and raw httpx2 clients.
- :mod:`~kubetide.kube.rest`: raw JSON requests, watch streams, status errors, retries with backoff.
- :mod:`~kubetide.kube.discovery`: the served API versions and the resources' REST paths.
- :mod:`~kubetide.kube.schema`, :mod:`~kubetide.kube.trim`: what the caches keep of each object.
- :mod:`~kubetide.kube.cache`: watch caches (informers) with views memoized per resourceVersion;
  :mod:`~kubetide.kube.gcpause` pauses the GC while they build; :mod:`~kubetide.kube.sync_gate` skips
  loops while a cache is not synced.
- :mod:`~kubetide.kube.events`: Events as client-go's recorder writes and aggregates them.
- :mod:`~kubetide.kube.leader`: Lease leader election with client-go's semantics.
- :mod:`~kubetide.kube.http`: ``/metrics``, ``/health-check`` and a component's JSON pages (the loops
  themselves run on :mod:`kubetide.clock`'s real-time clock, through :mod:`kubetide.runners`);
  :mod:`~kubetide.kube.urls`: whether a URL given on the command line can be the service it names.
- :mod:`~kubetide.kube.metrics`: kubetide's own ``kubetide_*`` metrics; :mod:`~kubetide.kube.failures`
  and :mod:`~kubetide.kube.redaction`: one-line failures (and :class:`~kubetide.kube.failures.LoopFailed`)
  and logs without secrets.
"""
