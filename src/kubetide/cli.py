"""The ``kubetide`` command line: one click group; each sub-command lives in ``kubetide.commands``.

Exit codes: 0 success, 1 the command ran but failed, 2 bad input (every problem is printed with its
field path; never a traceback).
"""

from __future__ import annotations

import click

from kubetide import __version__
from kubetide.commands import registered_commands


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="kubetide")
def main() -> None:
    """kubetide: Kubernetes autoscaling with exact upstream semantics, and a simulator that runs the
    same autoscaler code on a virtual clock.

    \b
    Start with:
      kubetide simulate examples/quickstart.yaml          a web shop's day with an HPA, in a second
      kubetide simulate examples/cluster-autoscaler.yaml  the Cluster Autoscaler failing over a stockout
      kubetide sweep examples/quickstart.yaml --grid spec.autoscalers.hpa.tolerance=0.05,0.1,0.2 --seeds 3
                                                          which setting: runs ranked, the trade-off
      kubetide hpa explain examples/hpa-explain.yaml      why an HPA decides what it decides
      kubetide explain examples/cluster-autoscaler.yaml --at 11h   why the cluster autoscaler did that
      kubetide validate my-scenario.yaml                  every problem with its field path
      kubetide scenario from-cluster > mine.yaml          simulate your own cluster
      kubetide run cluster-autoscaler --help              live mode: CA, hpa, escalator on a cluster
    """


for _command in registered_commands():
    main.add_command(_command)
