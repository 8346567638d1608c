"""Shadow mode: an autoscaler that decides beside the one a cluster runs, acts on nothing, and records
where the two disagree (``kubetide run ... --shadow``).

- :mod:`.compare`: the comparison, a pure function of what the running autoscaler did and what
  kubetide decided, loop after loop: the disagreements and when each ends;
- :mod:`.observe`: what the running autoscaler did, from two looks at the cluster (group targets,
  nodes removed or being removed, an HPA's desired replicas);
- :mod:`.ca_plans`: a cluster autoscaler's :class:`~kubetide.cluster.loop.plan.LoopPlan` as the
  comparison reads it (what it would do, why it keeps each node);
- :mod:`.counterfactual`: the cloud as it was before the running autoscaler's latest scale-ups, so
  kubetide decides in its place rather than after it;
- :mod:`.journal`: the records, JSON lines appended and synced, read back at start;
- :mod:`.shadow`: one shadow's loop: observe, decide, compare, record, count, say.
"""
