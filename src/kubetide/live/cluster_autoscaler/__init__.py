"""Cluster Autoscaler's live adapters: its world from watch caches (:mod:`.world`), its Prometheus
metrics under CA's names (:mod:`.metrics`) and its status ConfigMap (:mod:`.status_configmap`)."""
