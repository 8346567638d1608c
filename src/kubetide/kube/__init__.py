"""The live Kubernetes adapter: the ports of the decision cores implemented against a real API server.

Watch caches (list, then watch), actuation (taints, evictions, scale, Events, status), leader election.
Client types (lightkube) stay inside this package: the cores see only kubetide's own views.
"""
