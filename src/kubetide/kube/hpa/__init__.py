"""The live HPA's ports: metrics from the metrics APIs or straight from Prometheus, scale targets
through the scale subresource, and the HPAs to reconcile (kubetide's CRD or the standard objects).

Each module is one adapter; the controller (``kubetide.hpa``) sees only its ports.
"""
