"""The stages of the Cluster Autoscaler main loop (:mod:`kubetide.cluster.autoscaler`), each deciding or
acting, never both.

What a loop reads and returns: ``world`` (the world), ``result`` (what it returns), ``view`` (the loop's read-only view),
``start`` (the view read from the world and the cloud). What it decides, each a phase of the frozen
``plan``: ``housekeeping`` (startup cleanup, the cluster state's findings, unregistered and failed
instances, group sizes, min sizes), ``templates`` (node templates from real nodes), ``snapshot``,
``scaleup_decision``, ``scaledown_plan`` (the planner, with its stages in ``scaledown_stages``),
``deletions`` (each drain's next step, kept on node taints, resumed every loop and after restarts,
with its clocks in ``drain``) and ``unremovable`` (its events). What acts: the one ``actuator``,
through ``housekeeping_actuator``, ``scaleup_actuator``, ``scaledown_actuator`` and
``drain_actuator``, recording an ``outcome``. Besides: ``events`` (deduplication, the cluster state's
findings as events), ``report`` (metrics, candidates), ``timing``."""
