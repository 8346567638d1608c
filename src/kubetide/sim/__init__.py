"""The simulator: a scenario file, a virtual clock, and simulated clusters and clouds driven by the real
autoscaler code. This package may import the decision core; the core never imports it.

The public API (what ``kubetide simulate`` does, from Python)::

    scenario = load_scenario("examples/quickstart.yaml", overrides=["spec.duration=2h"])
    result = Simulation(scenario, seed=7).run()
    write_outputs("out", result.summary, result.timeline, result.events, result.meta)
"""

from kubetide.sim.output.writer import OutputPaths, write_outputs
from kubetide.sim.scenario.loader import load_scenario
from kubetide.sim.simulation import Simulation, SimulationResult

__all__ = ["OutputPaths", "Simulation", "SimulationResult", "load_scenario", "write_outputs"]
