"""Cluster Autoscaler's settings: every flag the CA spec lists, under CA's name and with CA's default.

This dataclass is the one source of truth for CA flags. Each field carries its flag name, kind and
help in its metadata; :data:`FLAGS` is derived from the fields, and the scenario's flag registry
(:mod:`kubetide.cluster.flags`) is generated from :data:`FLAGS`, so a flag added here is at once
accepted by scenario files with its default. Durations are float seconds (CA's Go durations), memory
limits are GiB as on CA's command line. Per-node-group overrides are the cloud port's
:class:`~kubetide.cloud.instance.NodeGroupAutoscalingOptions`, resolved by :func:`node_group_options`.

A few defaults changed between CA releases (:data:`kubetide.cluster.compat.FLAG_DEFAULTS`): those fields
default to ``None`` and are given the default of ``--ca-compatibility-version`` at construction, so
``AutoscalingOptions(ca_compatibility_version="1.36")`` has CA 1.36's defaults; a value given is kept.
(``dataclasses.replace`` passes the values already resolved: it keeps the old version's defaults.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kubetide.cloud.instance import NodeGroupAutoscalingOptions, NotImplementedByProvider
from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.compat import (
    CA_VERSIONS,
    DEFAULT_CA_VERSION,
    FLAG_DEFAULTS,
    Compatibility,
    compatibility,
)
from kubetide.cluster.flag_help import FLAG_HELP

__all__ = [
    "EXPANDER_NAMES",
    "FLAGS",
    "AutoscalingOptions",
    "Flag",
    "FlagKind",
    "node_group_options",
]

# "list": CA's comma-separated or repeated string lists; "multi": CA's MultiStringFlag, each occurrence one
# item, never split at commas (an auto-discovery spec is itself comma-separated).
FlagKind = Literal["duration", "bool", "int", "float", "string", "list", "multi"]
# Every name the expander factory knows, in CA's flag-help order (least-nodes is registered but unlisted).
EXPANDER_NAMES = ("random", "most-pods", "least-waste", "price", "priority", "grpc", "least-nodes")


@dataclass(frozen=True, slots=True)
class Flag:
    """One CA command-line flag: its name, kind, default (durations in seconds) and help."""

    name: str
    attr: str
    kind: FlagKind
    default: Any
    help: str


def _f(name: str, kind: FlagKind, default: Any, help: str = "") -> Any:
    meta = {"flag": name, "kind": kind, "help": help}
    if isinstance(default, tuple | list):
        return field(default=tuple(default), metadata=meta)
    return field(default=default, metadata=meta)


def _versioned(name: str, kind: FlagKind, help: str = "") -> Any:
    """A flag whose default is the ``--ca-compatibility-version``'s (None until ``__post_init__``)."""
    return field(default=None, metadata={"flag": name, "kind": kind, "help": help, "versioned": True})


@dataclass(frozen=True, slots=True)
class AutoscalingOptions:
    """CA's flags as typed values (``config.AutoscalingOptions``); build with :meth:`from_flags`."""

    # kubetide's own: the CA release whose decisions and defaults kubetide follows (kubetide.cluster.compat).
    ca_compatibility_version: str = _f(
        "ca-compatibility-version",
        "string",
        DEFAULT_CA_VERSION,
        f"kubetide: decide as this Cluster Autoscaler release ({' or '.join(CA_VERSIONS)}): the "
        "utilization threshold and zero unneeded-time boundaries, broken utilizations, --max-nodes-total's "
        "result, and the defaults of --expander, --blocking-system-pod-distruption-timeout, "
        "--cordon-node-before-terminating and --revert-timed-out-scale-ups",
    )
    # Loop and liveness.
    scan_interval: float = _f("scan-interval", "duration", 10.0, "how often the cluster is reevaluated")
    # CA 1.31's default (1.36: true). kubetide's loop runs every --scan-interval: true is not implemented.
    frequent_loops_enabled: bool = _f("frequent-loops-enabled", "bool", False)
    max_inactivity: float = _f("max-inactivity", "duration", 600.0)
    max_failing_time: float = _f("max-failing-time", "duration", 900.0)
    max_startup_time: float = _f("max-startup-time", "duration", 1200.0)
    address: str = _f("address", "string", ":8085")
    namespace: str = _f("namespace", "string", "kube-system", "status and priority ConfigMaps live here")
    write_status_configmap: bool = _f("write-status-configmap", "bool", True)
    status_config_map_name: str = _f("status-config-map-name", "string", "cluster-autoscaler-status")
    cloud_provider: str = _f("cloud-provider", "string", "gce")
    cloud_config: str = _f("cloud-config", "string", "")
    nodes: tuple[str, ...] = _f("nodes", "list", (), "<min>:<max>:<name>")
    node_group_auto_discovery: tuple[str, ...] = _f("node-group-auto-discovery", "multi", ())
    leader_elect: bool = _f("leader-elect", "bool", True)
    # Cluster-state health and provisioning.
    max_total_unready_percentage: float = _f("max-total-unready-percentage", "float", 45.0)
    ok_total_unready_count: int = _f("ok-total-unready-count", "int", 3)
    max_node_provision_time: float = _f(
        "max-node-provision-time", "duration", 900.0, "a node not registered by then is removed"
    )
    max_node_startup_time: float = _f("max-node-startup-time", "duration", 900.0)
    scale_up_from_zero: bool = _f("scale-up-from-zero", "bool", True)
    initial_node_group_backoff_duration: float = _f("initial-node-group-backoff-duration", "duration", 300.0)
    max_node_group_backoff_duration: float = _f("max-node-group-backoff-duration", "duration", 1800.0)
    node_group_backoff_reset_timeout: float = _f("node-group-backoff-reset-timeout", "duration", 10800.0)
    # kubetide's own: 0 (off) keeps CA's behaviour.
    scale_up_progress_timeout: float = _f(
        "scale-up-progress-timeout",
        "duration",
        0.0,
        "kubetide: a scale-up that produced no new instance within this fails as a stockout (0: off)",
    )
    revert_timed_out_scale_ups: bool = _versioned(
        "revert-timed-out-scale-ups",
        "bool",
        "kubetide: as CA 1.36, a scale-up that timed out gives its increase back at once and only groups "
        "with a scale-up in flight and no backoff count upcoming nodes (false: CA 1.31, the target stays "
        "until the wrong size is fixed); default: the --ca-compatibility-version's (1.31: false, 1.36: true)",
    )
    failover_to_untried_groups: bool = _f(
        "failover-to-untried-groups",
        "bool",
        True,
        "kubetide: a group whose scale-up timed out is not chosen again while a group not tried yet can "
        "take the pods (false: CA's way, any group whose backoff ended)",
    )
    delete_unregistered_foreign_instances: bool = _f(
        "delete-unregistered-foreign-instances",
        "bool",
        False,
        "kubetide: also remove unregistered instances kubetide did not launch (that predate it, or appeared "
        "with no scale-up of its in flight), as CA does; off: they are kept and reported",
    )
    # Scale-up.
    estimator: str = _f("estimator", "string", "binpacking")
    expander: str = _versioned(
        "expander",
        "string",
        "node group choice for scale-up; default: random (CA 1.31), least-waste with "
        "--ca-compatibility-version=1.36 (CA 1.33+)",
    )
    grpc_expander_url: str = _f("grpc-expander-url", "string", "")
    grpc_expander_cert: str = _f("grpc-expander-cert", "string", "")
    max_nodes_per_scaleup: int = _f("max-nodes-per-scaleup", "int", 1000)
    max_nodegroup_binpacking_duration: float = _f("max-nodegroup-binpacking-duration", "duration", 10.0)
    max_binpacking_time: float = _f("max-binpacking-time", "duration", 300.0)
    fastpath_binpacking_enabled: bool = _f("fastpath-binpacking-enabled", "bool", False)
    balance_similar_node_groups: bool = _f("balance-similar-node-groups", "bool", False)
    balancing_ignore_label: tuple[str, ...] = _f("balancing-ignore-label", "list", ())
    balancing_label: tuple[str, ...] = _f("balancing-label", "list", ())
    memory_difference_ratio: float = _f("memory-difference-ratio", "float", 0.015)
    max_allocatable_difference_ratio: float = _f("max-allocatable-difference-ratio", "float", 0.05)
    max_free_difference_ratio: float = _f("max-free-difference-ratio", "float", 0.05)
    max_nodes_total: int = _f("max-nodes-total", "int", 0, "cluster-wide node cap (0: none)")
    cores_total: str = _f("cores-total", "string", "0:320000", "min:max cores")
    memory_total: str = _f("memory-total", "string", "0:6400000", "min:max GiB")
    gpu_total: tuple[str, ...] = _f("gpu-total", "list", (), "<type>:<min>:<max>")
    new_pod_scale_up_delay: float = _f("new-pod-scale-up-delay", "duration", 0.0, "younger pods wait")
    expendable_pods_priority_cutoff: int = _f("expendable-pods-priority-cutoff", "int", -10)
    bypassed_scheduler_names: tuple[str, ...] = _f("bypassed-scheduler-names", "list", ())
    allowed_scheduler_names: tuple[str, ...] = _f("allowed-scheduler-names", "list", ())
    parallel_scale_up: bool = _f("parallel-scale-up", "bool", False)
    enforce_node_group_min_size: bool = _f("enforce-node-group-min-size", "bool", False)
    force_ds: bool = _f("force-ds", "bool", False)
    scale_from_unschedulable: bool = _f("scale-from-unschedulable", "bool", False)
    startup_taint: tuple[str, ...] = _f("startup-taint", "list", ())
    startup_taint_prefix: tuple[str, ...] = _f("startup-taint-prefix", "list", ())
    status_taint: tuple[str, ...] = _f("status-taint", "list", ())
    ignore_taint: tuple[str, ...] = _f("ignore-taint", "list", ())
    node_info_cache_expire_time: float = _f("node-info-cache-expire-time", "duration", 87600 * 3600.0)
    salvo_scale_up: bool = _f("salvo-scale-up", "bool", False)
    salvo_scale_up_budget: float = _f("salvo-scale-up-budget", "duration", 60.0)
    enable_graceful_degradation: bool = _f("enable-graceful-degradation", "bool", False)
    pending_pods_batching_timeout: float = _f("pending-pods-batching-timeout", "duration", 240.0)
    predicate_parallelism: int = _f("predicate-parallelism", "int", 4)
    async_node_groups: bool = _f("async-node-groups", "bool", False)
    # Scale-down.
    scale_down_enabled: bool = _f("scale-down-enabled", "bool", True, "deprecated upstream")
    scale_down_utilization_threshold: float = _f("scale-down-utilization-threshold", "float", 0.5)
    scale_down_gpu_utilization_threshold: float = _f("scale-down-gpu-utilization-threshold", "float", 0.5)
    scale_down_unneeded_time: float = _f("scale-down-unneeded-time", "duration", 600.0)
    scale_down_unready_time: float = _f("scale-down-unready-time", "duration", 1200.0)
    scale_down_unready_enabled: bool = _f("scale-down-unready-enabled", "bool", True)
    scale_down_delay_after_add: float = _f("scale-down-delay-after-add", "duration", 600.0)
    scale_down_delay_after_delete: float = _f("scale-down-delay-after-delete", "duration", 0.0)
    scale_down_delay_after_failure: float = _f("scale-down-delay-after-failure", "duration", 180.0)
    scale_down_delay_type_local: bool = _f("scale-down-delay-type-local", "bool", False)
    scale_down_simulation_timeout: float = _f("scale-down-simulation-timeout", "duration", 30.0)
    scale_down_non_empty_candidates_count: int = _f(
        "scale-down-non-empty-candidates-count", "int", 30, "legacy; not read by the planner"
    )
    scale_down_candidates_pool_ratio: float = _f("scale-down-candidates-pool-ratio", "float", 0.1, "legacy")
    scale_down_candidates_pool_min_count: int = _f(
        "scale-down-candidates-pool-min-count", "int", 50, "legacy"
    )
    unremovable_node_recheck_timeout: float = _f("unremovable-node-recheck-timeout", "duration", 300.0)
    max_scale_down_parallelism: int = _f("max-scale-down-parallelism", "int", 10)
    max_drain_parallelism: int = _f("max-drain-parallelism", "int", 1)
    max_empty_bulk_delete: int = _f("max-empty-bulk-delete", "int", 10, "removed in 1.33 (parallelism alias)")
    max_graceful_termination_sec: int = _f("max-graceful-termination-sec", "int", 600)
    drain_priority_config: str = _f("drain-priority-config", "string", "", "prio:secs,...")
    max_pod_eviction_time: float = _f("max-pod-eviction-time", "duration", 120.0)
    node_delete_delay_after_taint: float = _f("node-delete-delay-after-taint", "duration", 5.0)
    dynamic_node_delete_delay_after_taint_enabled: bool = _f(
        "dynamic-node-delete-delay-after-taint-enabled", "bool", False
    )
    node_deletion_delay_timeout: float = _f("node-deletion-delay-timeout", "duration", 120.0)
    node_deletion_batcher_interval: float = _f("node-deletion-batcher-interval", "duration", 0.0)
    cordon_node_before_terminating: bool = _versioned("cordon-node-before-terminating", "bool")
    daemonset_eviction_for_empty_nodes: bool = _f("daemonset-eviction-for-empty-nodes", "bool", False)
    daemonset_eviction_for_occupied_nodes: bool = _f("daemonset-eviction-for-occupied-nodes", "bool", True)
    skip_nodes_with_system_pods: bool = _f("skip-nodes-with-system-pods", "bool", True)
    skip_nodes_with_local_storage: bool = _f("skip-nodes-with-local-storage", "bool", True)
    skip_nodes_with_custom_controller_pods: bool = _f("skip-nodes-with-custom-controller-pods", "bool", True)
    min_replica_count: int = _f("min-replica-count", "int", 0)
    # (sic): CA's flag name misspells "disruption". CA 1.33's flag: CA 1.31 has none (a kube-system pod
    # without a PDB always blocks its node), which its 1.31 default here, 0 (never), keeps.
    blocking_system_pod_distruption_timeout: float = _versioned(
        "blocking-system-pod-distruption-timeout", "duration"
    )
    ignore_daemonsets_utilization: bool = _f("ignore-daemonsets-utilization", "bool", False)
    ignore_mirror_pods_utilization: bool = _f("ignore-mirror-pods-utilization", "bool", False)
    max_bulk_soft_taint_count: int = _f("max-bulk-soft-taint-count", "int", 10)
    max_bulk_soft_taint_time: float = _f("max-bulk-soft-taint-time", "duration", 3.0)
    node_deletion_candidate_ttl: float = _f("node-deletion-candidate-ttl", "duration", 0.0)
    force_delete_unregistered_nodes: bool = _f("force-delete-unregistered-nodes", "bool", False)
    force_delete_failed_nodes: bool = _f("force-delete-failed-nodes", "bool", False)
    # CapacityBuffer, ProvisioningRequest and CapacityQuota (CA 1.34-1.36; kubetide.cluster.capacity).
    capacity_buffer_controller_enabled: bool = _f(
        "capacity-buffer-controller-enabled",
        "bool",
        False,
        "translate each CapacityBuffer into a managed PodTemplate and a number of chunks, in its status",
    )
    capacity_buffer_pod_injection_enabled: bool = _f(
        "capacity-buffer-pod-injection-enabled",
        "bool",
        False,
        "inject the fake pods of ready CapacityBuffers into the pending pods",
    )
    capacity_buffer_ca_ordering: bool = _f(
        "capacity-buffer-ca-ordering",
        "bool",
        False,
        "kubetide: place buffer fake pods as CA 1.36 does, injected before the filter of schedulable pods "
        "and sorted with the real pending pods by priority (false: after every real pending pod)",
    )
    capacity_buffer_pod_dry_run_enabled: bool = _f(
        "capacity-buffer-pod-dry-run-enabled",
        "bool",
        True,
        "build a buffer's managed PodTemplate from the API server's dry-run creation of its pod (its "
        "admission and defaulting); false, or in a scenario: the defaulting CA applies itself",
    )
    capacity_quotas_enabled: bool = _f(
        "capacity-quotas-enabled", "bool", False, "enforce CapacityQuotas and keep their status"
    )
    enable_provisioning_requests: bool = _f(
        "enable-provisioning-requests", "bool", False, "handle ProvisioningRequests"
    )
    provisioning_request_initial_backoff_time: float = _f(
        "provisioning-request-initial-backoff-time",
        "duration",
        60.0,
        "how long a ProvisioningRequest waits after Provisioned=False before it is tried again",
    )
    provisioning_request_max_backoff_time: float = _f(
        "provisioning-request-max-backoff-time",
        "duration",
        600.0,
        "the longest wait between a ProvisioningRequest's tries (each wait doubles up to it)",
    )
    provisioning_request_max_backoff_cache_size: int = _f(
        "provisioning-request-max-backoff-cache-size",
        "int",
        1000,
        "how many ProvisioningRequests' waits are remembered (the least recently used go first)",
    )
    provisioning_request_book_bound_pods: bool = _f(
        "provisioning-request-book-bound-pods",
        "bool",
        False,
        "kubetide: book a Provisioned request's capacity as CA 1.36 does, all of its pods (those already "
        "running too) and also once CapacityRevoked (false: only its pods not yet bound, none once revoked)",
    )
    provisioning_request_partial_delivery_check: bool = _f(
        "provisioning-request-partial-delivery-check",
        "bool",
        True,
        "kubetide: a best-effort-atomic request whose nodes did not all register (a failed or timed-out "
        "scale-up, a lowered target) is Provisioned False and retried, and the empty nodes that came for "
        "it are removed (false: CA's way, it stays Provisioned)",
    )
    check_capacity_batch_processing: bool = _f(
        "check-capacity-batch-processing", "bool", False, "answer check-capacity requests in batches"
    )
    check_capacity_provisioning_request_max_batch_size: int = _f(
        "check-capacity-provisioning-request-max-batch-size",
        "int",
        10,
        "the most check-capacity requests answered in one batch",
    )
    check_capacity_provisioning_request_batch_timebox: float = _f(
        "check-capacity-provisioning-request-batch-timebox",
        "duration",
        10.0,
        "the longest a batch of check-capacity requests may take (wall time; none passes in a simulation)",
    )
    check_capacity_processor_instance: str = _f(
        "check-capacity-processor-instance",
        "string",
        "",
        "serve only the check-capacity requests with this processorInstance parameter (or class prefix); "
        "when set, no best-effort-atomic request is served",
    )
    # Client.
    kube_client_qps: float = _f("kube-client-qps", "float", 5.0)
    kube_client_burst: int = _f("kube-client-burst", "int", 10)
    record_duplicated_events: bool = _f("record-duplicated-events", "bool", False)

    def __post_init__(self) -> None:
        compatibility(self.ca_compatibility_version)  # ValueError for a release kubetide does not know
        defaults = FLAG_DEFAULTS[self.ca_compatibility_version]
        for attr, flag in _VERSIONED:
            if getattr(self, attr) is None:
                object.__setattr__(self, attr, defaults[flag])

    @property
    def compat(self) -> Compatibility:
        """The decisions of ``--ca-compatibility-version``."""
        return compatibility(self.ca_compatibility_version)

    @classmethod
    def from_flags(cls, values: Mapping[str, Any]) -> AutoscalingOptions:
        """Options from parsed flag values keyed by CA flag name (durations already in seconds).

        KeyError names an unknown flag: a typo must not silently fall back to a default.
        """
        by_flag = {f.name: f.attr for f in FLAGS}
        kwargs: dict[str, Any] = {}
        if "max-empty-bulk-delete" in values and "max-scale-down-parallelism" not in values:
            # main.go: the removed flag given alone sets the parallelism (it was its alias).
            kwargs["max_scale_down_parallelism"] = values["max-empty-bulk-delete"]
        for name, value in values.items():
            if name not in by_flag:
                raise KeyError(f"unknown Cluster Autoscaler flag {name!r}")
            kwargs[by_flag[name]] = tuple(value) if isinstance(value, list) else value
        return cls(**kwargs)

    def flag(self, name: str) -> Any:
        """The value of CA flag ``name``."""
        return getattr(self, _ATTR_BY_FLAG[name])

    def to_flags(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.attr) for f in FLAGS}

    @property
    def expanders(self) -> tuple[str, ...]:
        """``--expander`` split into the chain of strategy names."""
        return tuple(n.strip() for n in self.expander.split(",") if n.strip())

    def node_group_defaults(self) -> NodeGroupAutoscalingOptions:
        """The values a node group gets unless its provider overrides them (``GetOptions(defaults)``)."""
        return NodeGroupAutoscalingOptions(
            scale_down_utilization_threshold=self.scale_down_utilization_threshold,
            scale_down_gpu_utilization_threshold=self.scale_down_gpu_utilization_threshold,
            scale_down_unneeded_time=self.scale_down_unneeded_time,
            scale_down_unready_time=self.scale_down_unready_time,
            max_node_provision_time=self.max_node_provision_time,
            max_node_startup_time=self.max_node_startup_time,
            ignore_daemon_sets_utilization=self.ignore_daemonsets_utilization,
        )


_VERSIONED = tuple(
    (f.name, f.metadata["flag"])
    for f in dataclasses.fields(AutoscalingOptions)
    if f.metadata.get("versioned")
)
# Flag.default of a versioned flag: the default release's.
FLAGS: tuple[Flag, ...] = tuple(
    Flag(
        f.metadata["flag"],
        f.name,
        f.metadata["kind"],
        FLAG_DEFAULTS[DEFAULT_CA_VERSION][f.metadata["flag"]] if f.metadata.get("versioned") else f.default,
        f.metadata["help"] or FLAG_HELP.get(f.metadata["flag"], ""),
    )
    for f in dataclasses.fields(AutoscalingOptions)
)
_ATTR_BY_FLAG = {f.name: f.attr for f in FLAGS}


def node_group_options(
    group: NodeGroup, defaults: NodeGroupAutoscalingOptions
) -> NodeGroupAutoscalingOptions:
    """The group's own settings: its provider's overrides, or ``defaults`` when it has none.

    CA treats both a nil answer and ErrNotImplemented as "use the defaults".
    """
    try:
        own = group.get_options(defaults)
    except NotImplementedByProvider:
        return defaults
    return defaults if own is None else own
