"""The cloud behind the autoscalers: the cloud-provider port.

The port (:mod:`kubetide.cloud.provider`, :mod:`kubetide.cloud.instance`) is pure types that the
decision cores depend on; its recording fake is :mod:`kubetide.testing.cloud`. The real providers
are live adapters (:mod:`kubetide.live.providers`); the simulated cloud is the simulator's
(:mod:`kubetide.sim.cloud`).
"""

from kubetide.cloud.provider import (
    CloudProvider,
    CloudProviderError,
    ErrorClass,
    Instance,
    InstanceErrorInfo,
    InstanceState,
    InstanceStatus,
    NodeGroup,
    NodeGroupAutoscalingOptions,
    NodeTemplate,
    NotImplementedByProvider,
    PricingModel,
)

__all__ = [
    "CloudProvider",
    "CloudProviderError",
    "ErrorClass",
    "Instance",
    "InstanceErrorInfo",
    "InstanceState",
    "InstanceStatus",
    "NodeGroup",
    "NodeGroupAutoscalingOptions",
    "NodeTemplate",
    "NotImplementedByProvider",
    "PricingModel",
]
