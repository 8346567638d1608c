"""The rules of scale-down (CA spec §7, upstream's ``core/scaledown``): eligibility, candidate order,
unneeded tracking and the removable check, PDB allowances, resource limits, budgets, cooldown and CA's
own taints. The loop's planner applies them (:mod:`kubetide.cluster.loop.scaledown_plan`) and its
actuator acts on the plan (:mod:`kubetide.cluster.loop.scaledown_actuator`); the removal simulation
they rely on is :mod:`kubetide.scheduling.removal_simulation`."""
