"""The cloud behind the autoscalers: the provider port, its recording fake, and the real providers.

The port (:mod:`kubetide.cloud.provider`, :mod:`kubetide.cloud.instance`) is pure types that the
decision cores depend on; :mod:`kubetide.cloud.fake` records calls for unit tests; real providers live in
:mod:`kubetide.cloud.providers`. The simulated cloud is the simulator's (:mod:`kubetide.sim.cloud`).
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
