"""``kubetide scenario from-cluster``: a live cluster written as a simulator scenario.

"Simulate my cluster" should take a minute, not an hour of hand-translation. The work is split as the
rest of kubetide splits deciding from doing:

- :mod:`~kubetide.live.export.read` is the only I/O: it lists the API objects (discovering which
  versions the server serves) into a :class:`ClusterObjects` of plain dicts;
- :func:`build_scenario` is pure: API objects in, the scenario document (a plain dict) and the notes a
  user must read out (assumed group bounds, dropped objects, hints);
- :func:`fit_to_loader` drops what the simulator's loader rejects, through a checker the caller passes
  (this package must not import the simulator: the command wires the two together).
"""

from kubetide.live.export.document import Export, ExportOptions, build_scenario
from kubetide.live.export.fit import Problem, fit_to_loader
from kubetide.live.export.snapshot import ClusterObjects

__all__ = [
    "ClusterObjects",
    "Export",
    "ExportOptions",
    "Problem",
    "build_scenario",
    "fit_to_loader",
]
