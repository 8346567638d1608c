"""Values the cloud-provider port hands to Cluster Autoscaler: instances, their states and creation errors.

These mirror ``cloudprovider.Instance`` and friends in the Cluster Autoscaler: an instance is identified by
the ``spec.providerID`` its Node will carry, so CA can tell registered instances from ones still booting;
a ``Creating`` instance with an :class:`InstanceErrorInfo` is a failed creation (CA spec §2.7). Also the
node template a group claims for scale-from-zero, the per-group option overrides, and the port's errors.
Pure values; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = [
    "CloudProviderError",
    "ErrorClass",
    "Instance",
    "InstanceErrorInfo",
    "InstanceState",
    "InstanceStatus",
    "NodeGroupAutoscalingOptions",
    "NodeTemplate",
    "NotImplementedByProvider",
]


class CloudProviderError(Exception):
    """A cloud call failed (API error, quota, a request the group refuses); the state is unchanged."""


class NotImplementedByProvider(NotImplementedError):
    """The provider does not offer this optional method (upstream ``ErrNotImplemented``).

    Not a failure: callers fall back (e.g. ``has_instance`` falls back to the ToBeDeleted taint,
    ``atomic_increase_size`` to ``increase_size``). Deliberately not a :class:`CloudProviderError`, so a
    handler for failures never swallows it.
    """


class InstanceState(IntEnum):
    # Member names as the brief and CA's Go constants spell them (``cloudprovider.InstanceRunning``).
    Running = 1
    Creating = 2
    Deleting = 3


class ErrorClass(IntEnum):
    OutOfResources = 1
    Other = 99

    @property
    def label(self) -> str:
        """The class as CA prints it in ``"<class>.<code>"`` (note: ``OutOfResource``, singular)."""
        return "OutOfResource" if self is ErrorClass.OutOfResources else "Other"


@dataclass(frozen=True, slots=True)
class InstanceErrorInfo:
    """Why an instance could not be created: CA groups failures by ``(error_class, error_code)``."""

    error_class: ErrorClass
    error_code: str
    error_message: str

    @property
    def key(self) -> str:
        return f"{self.error_class.label}.{self.error_code}"


@dataclass(frozen=True, slots=True)
class InstanceStatus:
    state: InstanceState
    error_info: InstanceErrorInfo | None = None


@dataclass(frozen=True, slots=True)
class Instance:
    """One machine of a node group; ``id`` equals the ``spec.providerID`` of the Node it registers.

    Optional, for providers that know them: ``addresses``, the IPs and host names the cloud reports for
    the machine (kubetide matches a Node that registered without a providerID by them), and
    ``creation_time`` (seconds, the autoscaler's clock), when the cloud accepted the request for it (a
    restarted autoscaler times provisioning from it); ``out_of_service``, the cloud says the machine is
    in the group but not serving it (AWS ``Standby``, ``Detaching``, a warm pool): no Node is expected
    of it, so kubetide never removes it as an unregistered node (CA does, after
    ``--max-node-provision-time``).
    """

    id: str
    status: InstanceStatus | None = None
    addresses: tuple[str, ...] = ()
    creation_time: float | None = None
    out_of_service: bool = False

    @property
    def has_creation_error(self) -> bool:
        """CA's test for a failed creation: state Creating with an error attached."""
        return (
            self.status is not None
            and self.status.state is InstanceState.Creating
            and self.status.error_info is not None
        )


@dataclass(frozen=True, slots=True)
class NodeTemplate:
    """What a node group claims a new, empty node looks like, and the pods it starts with (DaemonSets).

    Upstream this is a ``NodeInfo``; CA sanitizes it (new name, status taints removed) before use.
    """

    node: NodeView
    pods: tuple[Pod, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeGroupAutoscalingOptions:
    """Per-group overrides of CA's scale-down and provisioning settings (times in seconds)."""

    scale_down_utilization_threshold: float
    scale_down_gpu_utilization_threshold: float
    scale_down_unneeded_time: float
    scale_down_unready_time: float
    max_node_provision_time: float
    max_node_startup_time: float = 900.0
    zero_or_max_node_scaling: bool = False
    allow_non_atomic_scale_up_to_max: bool = False
    ignore_daemon_sets_utilization: bool = False
