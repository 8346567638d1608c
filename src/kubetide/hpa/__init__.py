"""The Horizontal Pod Autoscaler, deciding exactly as kube-controller-manager's HPA controller.

Entry point: :class:`kubetide.hpa.controller.HorizontalController` (one reconcile per call, ``now``
passed in, metrics and the scale target behind the ports in :mod:`kubetide.hpa.ports`). The stages:
``podgroups``/``podindex`` (which pods count), ``replicas`` (the replica calculator), ``sources``
(one module per metric source type), ``normalization`` with ``normalize`` (no behavior) and
``behavior`` (stabilization windows, rate-limit policies), ``conditions`` and ``decision`` (what a
sync returns), ``explain`` (the same, for people).
"""
