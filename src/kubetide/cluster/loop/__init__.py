"""The stages of the Cluster Autoscaler main loop (:mod:`kubetide.cluster.autoscaler`), each deciding or
acting, never both: the world it reads and the result it returns (``world``), the per-loop facts and
event recorder (``context``), node templates from real nodes (``templates``), ``housekeeping``
(startup cleanup, unregistered and failed instances, group sizes), ``scaleup_decision`` (decides) and
``scaleup_actuator`` (acts), ``scaledown_plan`` (decides a ``ScaleDownPlan``) and
``scaledown_actuator`` (acts), and ``deletions`` (drains and deletions kept on node taints, resumed
every loop and after restarts)."""
