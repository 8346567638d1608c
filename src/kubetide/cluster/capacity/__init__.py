"""The capacity APIs in the cluster autoscaler (CapacityBuffer, ProvisioningRequest, CapacityQuota): see
:mod:`.stage` for where the loop calls them."""
