"""The live wing, beside the simulator (:mod:`kubetide.sim`): each autoscaler's ports implemented
against a real API server and a real cloud.

The decision cores run unchanged here and in the simulator; only the ports differ. Built on the client
infrastructure (:mod:`kubetide.kube`); never imports the simulator (an import-linter contract).

- :mod:`~kubetide.live.actuation`: the ClusterPort's writes (taints, cordons, evictions, ConfigMaps,
  Events), shared by the cluster autoscaler and the batch autoscaler.
- :mod:`~kubetide.live.cluster_autoscaler`: Cluster Autoscaler's world from watch caches, its
  ``cluster_autoscaler_*`` metrics and its status ConfigMap.
- :mod:`~kubetide.live.escalator`: Escalator's world from watch caches and its metrics.
- :mod:`~kubetide.live.hpa`: the HPA controller's ports (metrics APIs or Prometheus, scale targets, HPAs).
- :mod:`~kubetide.live.providers`: the cloud providers (``kwok``, ``aws``, and the snapshot cloud of
  ``kubetide explain --snapshot``).
- :mod:`~kubetide.live.guard`: every port's writes made only while leading, and only said in a dry run
  (``--dry-run``).
- :mod:`~kubetide.live.agent`: ``kubetide node-agent``, the kubelet's stand-in for kwok nodes.
- :mod:`~kubetide.live.export`: ``kubetide scenario from-cluster``, a live cluster as a scenario.
"""
