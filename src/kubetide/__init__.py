"""kubetide: Kubernetes autoscaling with exact upstream semantics, and a simulator that runs the same code.

The decision cores (``kubetide.hpa``, ``kubetide.scheduling``, ...) take typed snapshots and a ``now`` and
return frozen decisions; adapters (the simulator, the live Kubernetes adapter) feed and act on them.
"""

# The one place the version is written: pyproject.toml reads it (``dynamic = ["version"]``).
__version__ = "0.1.0"
