"""The cloud behind the autoscalers: the provider port, its simulated implementation, and a test fake.

The port (:mod:`kubetide.cloud.provider`) is pure types; :mod:`kubetide.cloud.simulated` implements it
on the simulator's clock; :mod:`kubetide.cloud.fake` records calls for unit tests of other components.
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
