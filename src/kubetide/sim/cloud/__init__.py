"""The simulated cloud: instances on the virtual clock behind Cluster Autoscaler's NodeGroup port.

:mod:`simulated` is the provider (``SimulatedCloud``); the other modules are its parts: groups and their
instances, provisioning faults and disruptions, node objects built from templates, prices, and the
event reasons it emits.
"""
