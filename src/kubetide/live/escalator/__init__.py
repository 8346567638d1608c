"""Escalator's live adapters: its world from watch caches (:mod:`.world`) and its Prometheus metrics
under their upstream names (:mod:`.metrics`)."""
