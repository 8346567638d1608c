"""What each Cluster Autoscaler flag does, for ``kubetide run cluster-autoscaler --help`` and the
scenario flag table: upstream's meaning in a line, with kubetide's difference where there is one.

Kept apart from :mod:`kubetide.cluster.options` (names, kinds, defaults) so the option table stays
readable; a test checks that every flag has its line here or in the table.
"""

from __future__ import annotations

__all__ = ["FLAG_HELP"]

FLAG_HELP: dict[str, str] = {
    # Loop and liveness.
    "frequent-loops-enabled": "run the next loop early when a scale-up or new pending pods call for it "
    "(not implemented: only false, CA 1.31's default, is accepted)",
    "max-inactivity": "longest time without a loop before /health-check fails (the pod is restarted)",
    "max-failing-time": "longest time without a successful loop before /health-check fails",
    "max-startup-time": "longest time from start to the first successful loop before /health-check fails",
    "address": "address of the /metrics and /health-check endpoints",
    "write-status-configmap": "write the cluster-autoscaler-status ConfigMap each loop",
    "status-config-map-name": "name of the status ConfigMap (in --namespace)",
    "cloud-provider": "cloud provider: kwok (Node objects kubetide creates; test clusters, dry runs)",
    "cloud-config": "the cloud provider's configuration file (kwok: its node groups file)",
    "nodes": "a node group as <min>:<max>:<name>; repeat for more groups",
    "node-group-auto-discovery": "find node groups by the provider's tags, e.g. asg:tag=KEY[=VALUE],...",
    "leader-elect": "run with leader election on a coordination.k8s.io/v1 Lease (one replica acts)",
    # Cluster-state health and provisioning.
    "max-total-unready-percentage": "above this share of unready nodes the cluster is unhealthy: no scaling",
    "ok-total-unready-count": "unready nodes always tolerated, whatever --max-total-unready-percentage says",
    "max-node-startup-time": "a registered node not Ready by then counts as failed to start",
    "scale-up-from-zero": "scale up even when the cluster has no ready node",
    "initial-node-group-backoff-duration": "first backoff of a node group whose scale-up failed",
    "max-node-group-backoff-duration": "longest backoff of a node group (it doubles per failure up to this)",
    "node-group-backoff-reset-timeout": "a node group's backoff resets after this long without a failure",
    # Scale-up.
    "estimator": "how new nodes are estimated for pending pods (binpacking)",
    "grpc-expander-url": "URL of the gRPC expander service (--expander=grpc)",
    "grpc-expander-cert": "CA certificate of the gRPC expander service",
    "max-nodes-per-scaleup": "most nodes one scale-up may add (the estimator stops there)",
    "max-nodegroup-binpacking-duration": "longest time the estimator may spend on one node group",
    "max-binpacking-time": "longest time the estimator may spend in one loop",
    "fastpath-binpacking-enabled": "estimate with the fast path for pods without inter-pod constraints",
    "balance-similar-node-groups": "split a scale-up across node groups with the same shape and labels",
    "balancing-ignore-label": "a label that does not make two node groups different; repeatable",
    "balancing-label": "compare node groups by these labels only; repeatable",
    "memory-difference-ratio": "memory capacities within this ratio count as similar for balancing",
    "max-allocatable-difference-ratio": "allocatables within this ratio count as similar for balancing",
    "max-free-difference-ratio": "free resources within this ratio count as similar for balancing",
    "expendable-pods-priority-cutoff": "pods below this priority never cause a scale-up nor block a scale-down",
    "bypassed-scheduler-names": "pods of these schedulers count as unschedulable without their verdict",
    "allowed-scheduler-names": "only pods of these schedulers are considered (list default-scheduler too)",
    "parallel-scale-up": "scale several node groups of one scale-up at once",
    "enforce-node-group-min-size": "raise node groups below their minimum size to it",
    "force-ds": "add DaemonSet pods to node templates even where the provider's template has none",
    "scale-from-unschedulable": "count unschedulable nodes' pods when deciding a scale-up",
    "startup-taint": "a taint expected while a node starts: ignored in templates; repeatable",
    "startup-taint-prefix": "taints with this key prefix are startup taints; repeatable",
    "status-taint": "a taint that reports status: ignored in templates and similarity; repeatable",
    "ignore-taint": "a taint to ignore in node templates (deprecated upstream: --startup-taint)",
    "node-info-cache-expire-time": "how long a node group's template learned from a node is kept",
    "salvo-scale-up": "scale up for every pending pod group in one loop (the time budget below)",
    "salvo-scale-up-budget": "time budget of a salvo scale-up",
    "enable-graceful-degradation": "keep scaling with partial results when the time budget runs out",
    "pending-pods-batching-timeout": "how long new pending pods are batched before a scale-up",
    "predicate-parallelism": "workers running scheduler filters (kubetide vectorizes instead; accepted)",
    "async-node-groups": "create node groups asynchronously (autoprovisioning providers)",
    # Scale-down.
    "scale-down-utilization-threshold": "a node whose cpu and memory requests are below this share of "
    "allocatable is a scale-down candidate",
    "scale-down-gpu-utilization-threshold": "as --scale-down-utilization-threshold, for GPU requests on GPU nodes",
    "scale-down-unneeded-time": "how long a node must be unneeded before it is removed",
    "scale-down-unready-time": "how long an unready node must be unneeded before it is removed",
    "scale-down-unready-enabled": "remove unready nodes that are unneeded",
    "scale-down-delay-after-add": "no scale-down for this long after a scale-up",
    "scale-down-delay-after-delete": "no scale-down for this long after a node deletion",
    "scale-down-delay-after-failure": "no scale-down for this long after a failed one",
    "scale-down-delay-type-local": "the delays above apply per node group, not cluster-wide",
    "scale-down-simulation-timeout": "longest time the scale-down simulation may take per loop",
    "unremovable-node-recheck-timeout": "a node found unremovable is not checked again for this long",
    "max-scale-down-parallelism": "most nodes deleted at once (empty ones included)",
    "max-drain-parallelism": "most non-empty nodes drained at once",
    "max-graceful-termination-sec": "longest graceful termination given to an evicted pod, in seconds",
    "max-pod-eviction-time": "how long a refused eviction is retried before the drain fails",
    "node-delete-delay-after-taint": "wait after tainting a node before deleting it",
    "dynamic-node-delete-delay-after-taint-enabled": "the wait after tainting follows the API server's latency",
    "node-deletion-delay-timeout": "longest wait for delay-deletion.cluster-autoscaler.kubernetes.io/ "
    "annotations to go before a node is deleted",
    "node-deletion-batcher-interval": "collect node deletions of one group for this long, then delete together",
    "cordon-node-before-terminating": "cordon a node with its ToBeDeleted taint (uncordoned if the deletion "
    "fails); default: the --ca-compatibility-version's (1.31: false, 1.36: true)",
    "daemonset-eviction-for-empty-nodes": "evict DaemonSet pods of empty nodes before deletion (best-effort, "
    "not waited for; the pod annotation cluster-autoscaler.kubernetes.io/enable-ds-eviction overrides it)",
    "daemonset-eviction-for-occupied-nodes": "evict DaemonSet pods of drained nodes before deletion (best-effort, "
    "not waited for; the pod annotation cluster-autoscaler.kubernetes.io/enable-ds-eviction overrides it)",
    "skip-nodes-with-system-pods": "never remove a node running kube-system pods (other than DaemonSet/mirror)",
    "skip-nodes-with-local-storage": "never remove a node running pods with local storage (emptyDir, hostPath)",
    "skip-nodes-with-custom-controller-pods": "never remove a node running pods of non-built-in controllers",
    "min-replica-count": "never remove a node whose drain would leave a workload below this many replicas",
    "blocking-system-pod-distruption-timeout": "kube-system pods without a PDB block scale-down until they "
    "are this old (0: always); default: the --ca-compatibility-version's, 1.31: 0 (CA 1.31 has no such "
    "flag), 1.36: 1h (CA 1.33's flag; name spelt as upstream's)",
    "ignore-daemonsets-utilization": "leave DaemonSet pods out of a node's utilization",
    "ignore-mirror-pods-utilization": "leave mirror (static) pods out of a node's utilization",
    "max-bulk-soft-taint-count": "most nodes given or cleared the soft DeletionCandidate taint per loop "
    "(0: none)",
    "max-bulk-soft-taint-time": "longest time spent on soft taints per loop",
    "node-deletion-candidate-ttl": "unneeded timers survive a restart if their soft taint is younger than this",
    "force-delete-unregistered-nodes": "delete unregistered instances even below the group's minimum size",
    "force-delete-failed-nodes": "delete failed instances even below the group's minimum size",
    # Client.
    "kube-client-qps": "API server requests per second (client-side limit)",
    "kube-client-burst": "API server request burst (client-side limit)",
    "record-duplicated-events": "emit an Event even when the same one was emitted in the last minutes",
}
