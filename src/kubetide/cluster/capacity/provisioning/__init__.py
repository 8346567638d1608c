"""ProvisioningRequests: which one the loop serves, its classes, its bookings and lifetime."""
