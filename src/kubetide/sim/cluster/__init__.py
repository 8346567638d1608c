"""The simulated Kubernetes cluster: objects, controllers, pod and node lifecycles, the scheduler loop.

It plays the API server plus the controllers the autoscalers rely on (Deployment/ReplicaSet,
StatefulSet, DaemonSet, Job, pod garbage collection, PodDisruptionBudgets with the eviction API), on
the simulator's virtual clock, and serves the autoscalers' ports.
"""
