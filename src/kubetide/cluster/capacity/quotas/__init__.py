"""CapacityQuotas: the tracker of the limits, the controller of the status."""
