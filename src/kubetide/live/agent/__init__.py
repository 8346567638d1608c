"""``kubetide node-agent``: the kubelet's stand-in for the Nodes kubetide creates (live contract §4).

For the nodes it owns (a label selector), it keeps them Ready (Lease renewals and the Ready condition,
so the node lifecycle controller lifts the ``not-ready`` taint and never marks them Unknown), runs the
pods bound to them (Running and Ready, Job pods completed after ``kubetide.io/duration``, deleted pods
confirmed after their grace period) and serves their usage on ``/metrics/resource`` in the kubelet's
format, from the pods' ``kubetide.io/usage`` annotations.

Layout: :mod:`.api` (the few API calls, behind a protocol so tests use an in-memory fake),
:mod:`.reflector` (list then watch into a store), :mod:`.nodes` and :mod:`.pods` (what to write, as pure
functions of an object and ``now``), :mod:`.usage` (CPU counters and the metrics text), :mod:`.server`
(HTTP), :mod:`.agent` (the worker that ties them together).
"""

from kubetide.live.agent.agent import AgentOptions, NodeAgent
from kubetide.live.agent.api import AgentApi, LightkubeAgentApi

__all__ = ["AgentApi", "AgentOptions", "LightkubeAgentApi", "NodeAgent"]
