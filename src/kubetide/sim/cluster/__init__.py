"""The simulated Kubernetes cluster: objects, controllers, pod and node lifecycles, the scheduler loop.

It plays the API server plus the controllers the autoscalers rely on, on the simulator's virtual
clock, and serves the autoscalers' ports. One module per role: :mod:`.store` (the objects, the pending
pods, the pods' change log), :mod:`.cluster` (``SimCluster``: the API server's writes, the eviction
API, and the roles wired together), :mod:`.kubelet`, :mod:`.node_lifecycle`, :mod:`.scheduler_loop`,
:mod:`.pod_gc`, :mod:`.workloads` (Deployment/ReplicaSet, StatefulSet, DaemonSet, Job) with
:mod:`.controllers` (when each reconciles), :mod:`.pdb` (PodDisruptionBudgets), :mod:`.pods` and
:mod:`.templates` (the pods' records and templates).
"""
