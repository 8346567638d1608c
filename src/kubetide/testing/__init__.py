"""kubetide's in-memory doubles, in one place: of its ports and of the APIs its live adapters call.

Part of the installed package on purpose: the benchmarks (``python -m kubetide.bench``) and
``kubetide explain --snapshot`` run the cluster autoscaler's loop on the port doubles, and whoever
tests their own wiring of kubetide (a provider, a runner) gets the doubles kubetide's tests use.
Nothing else in kubetide imports this package (import-linter contracts).

- :mod:`~kubetide.testing.cluster`: the recording ClusterPort (every write recorded and applied to the
  nodes and pods it holds, or, :meth:`~kubetide.testing.cluster.RecordingClusterPort.discarding`, to
  nothing).
- :mod:`~kubetide.testing.cloud`: the recording CloudProvider, built fluently.
- :mod:`~kubetide.testing.apiserver`: an API server answering scripted routes over an httpx2
  MockTransport (the client infrastructure's and the live ClusterPort's tests).
- :mod:`~kubetide.testing.hpa_server`: the same for the live HPA's API calls.
- :mod:`~kubetide.testing.lightkube_client`: a lightkube Client over a recording MockTransport.
- :mod:`~kubetide.testing.kwok_api`, :mod:`~kubetide.testing.agent_api`: in-memory implementations of
  the kwok provider's and the node agent's API ports.
- :mod:`~kubetide.testing.object_api`: an API server in the test's process that keeps objects and
  answers watches over HTTP on a loopback port, so the live caches and ports run against it unchanged;
  :mod:`~kubetide.testing.sim_api` serves a simulation's cluster through it (the live autoscalers on
  the simulator's world and virtual clock).
- :mod:`~kubetide.testing.clock`: a wall clock whose waits advance it, for the real-time clock and
  the live runtime.
"""
