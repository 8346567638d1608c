"""Metrics straight from Prometheus for the live HPA: a retrying HTTP client (``client``),
prometheus-adapter's rules file (``rules``) and the metrics port over both (``source``)."""
