"""The pieces of the Cluster Autoscaler main loop (:mod:`kubetide.cluster.autoscaler`): the world it reads
and the ports it acts through (``world``), node templates from real nodes (``templates``), and the
scale-down actuation kept on node taints (``scaledown``)."""
