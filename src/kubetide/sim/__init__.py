"""The simulator: a scenario file, a virtual clock, and simulated clusters and clouds driven by the real
autoscaler code. This package may import the decision core; the core never imports it."""
