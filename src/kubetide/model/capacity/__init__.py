"""Views of the capacity APIs Cluster Autoscaler 1.34-1.36 added (``autoscaling.x-k8s.io``): CapacityBuffer,
ProvisioningRequest and CapacityQuota, with the PodTemplates they name and the conditions they hold.

Each view is built from a manifest as ``kubectl get -o yaml`` prints it; a bad manifest raises one
:class:`~kubetide.model.errors.ManifestError` naming every problem with its field path.
"""

from kubetide.model.capacity.buffer import BUFFER_API_VERSIONS, BufferStatus, CapacityBuffer, ScalableRef
from kubetide.model.capacity.conditions import Condition
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.capacity.provisioning import PROVREQ_API_VERSIONS, PodSet, ProvisioningRequest
from kubetide.model.capacity.quota import QUOTA_API_VERSIONS, CapacityQuota

__all__ = [
    "BUFFER_API_VERSIONS",
    "PROVREQ_API_VERSIONS",
    "QUOTA_API_VERSIONS",
    "BufferStatus",
    "CapacityBuffer",
    "CapacityQuota",
    "Condition",
    "PodSet",
    "PodTemplateView",
    "ProvisioningRequest",
    "ScalableRef",
]
