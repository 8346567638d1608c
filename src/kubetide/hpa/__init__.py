"""The Horizontal Pod Autoscaler, deciding exactly as kube-controller-manager's HPA controller.

Entry points: :class:`kubetide.hpa.controller.HorizontalController` (``decide`` one sync without
writing, ``complete`` it once the caller has written the scale, or ``reconcile`` for both; ``now``
passed in, metrics and the scale target behind the ports in :mod:`kubetide.hpa.ports`), and
:class:`kubetide.hpa.driver.HPADriver`, the loop that acts on the decisions for every HPA. The stages:
``podgroups``/``podindex`` (which pods count), ``replicas`` (the replica calculator), ``sources``
(one module per metric source type), ``combine`` (the selector check, then the metrics combined),
``normalization`` (from the proposal to the desired count, AbleToScale and ScalingLimited) with
``without_behavior`` (the downscale window and the scale-up cap) or ``with_behavior`` (stabilization
windows, rate-limit policies), ``conditions`` and ``decision`` (what a sync decides and returns), ``driver`` (the loop, acting or,
in shadow mode, deciding only), ``memory`` (what of the controller's memory a later decision can
still read, as the live controller publishes and restores it), ``explain`` (the same, for people).
"""
