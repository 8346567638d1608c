"""CapacityBuffers: the controller that translates them, the injection of their fake pods."""
