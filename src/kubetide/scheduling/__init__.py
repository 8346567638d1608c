"""The scheduling core: a forkable cluster snapshot, kube-scheduler's filters vectorized over nodes,
equivalence groups, Cluster Autoscaler's binpacking estimator and removal simulation, and a scheduler
for the simulator. Pure computation: no I/O, no clock reads (time budgets take an injected clock).
"""
