"""The live Kubernetes adapter: the ports of the decision cores implemented against a real API server.

Client types (lightkube, httpx) stay inside this package: the cores see only kubetide's own views.

- :mod:`~kubetide.kube.client`: cluster access in kubectl's order; lightkube and raw httpx clients.
- :mod:`~kubetide.kube.rest`: raw JSON requests, watch streams, status errors, retries with backoff.
- :mod:`~kubetide.kube.discovery`: the served API versions and the resources' REST paths.
- :mod:`~kubetide.kube.schema`, :mod:`~kubetide.kube.trim`: what the caches keep of each object.
- :mod:`~kubetide.kube.cache`: watch caches (informers) with views memoized per resourceVersion;
  :mod:`~kubetide.kube.gcpause` pauses the GC while they build.
- :mod:`~kubetide.kube.world`: Cluster Autoscaler's World from the caches.
- :mod:`~kubetide.kube.actuation`, :mod:`~kubetide.kube.events`: the ClusterPort's writes and Events.
- :mod:`~kubetide.kube.leader`: Lease leader election with client-go's semantics.
- :mod:`~kubetide.kube.http`, :mod:`~kubetide.kube.loop`: ``/metrics`` and ``/health-check``; the
  periodic runner.
- :mod:`~kubetide.kube.metrics`: kubetide's own ``kubetide_*`` metrics.
"""
