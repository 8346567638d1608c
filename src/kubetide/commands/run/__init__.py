"""``kubetide run cluster-autoscaler | hpa | escalator``: the autoscalers against a real cluster.

Each sub-command takes its upstream's command line as it is (Go-style flags, see
:mod:`kubetide.commands.goflags`), so click only routes the arguments here; ``--help`` prints the
component's flag table.
"""

from __future__ import annotations

import importlib

import click

__all__ = ["run"]

# (name, module with a ``main(argv) -> None``, one-line help), in the order ``--help`` lists them.
_COMPONENTS: tuple[tuple[str, str, str], ...] = (
    (
        "cluster-autoscaler",
        "kubetide.commands.run.cluster_autoscaler",
        "Cluster Autoscaler's loop, with CA's flags and defaults.",
    ),
    ("hpa", "kubetide.commands.run.hpa", "The HPA controller, with kube-controller-manager's flags."),
    (
        "escalator",
        "kubetide.commands.run.escalator",
        "The batch autoscaler, with Escalator's flags and file.",
    ),
)

_PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


@click.group(short_help="Run an autoscaler against a real cluster (live mode).")
def run() -> None:
    """Run an autoscaler against a real Kubernetes cluster.

    \b
    Cluster access as kubectl finds it: --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else
    the in-cluster service account. Every component takes --dry-run (decide and report, change
    nothing), --once (one loop, print the decisions, exit) and --logging-format text|json, serves
    /metrics and /health-check on --address, and runs with leader election on a Lease.
    Each component's --help lists its flags.
    """


def _component(name: str, module: str, short: str) -> click.Command:
    @click.command(name, context_settings=_PASS_THROUGH, short_help=short, add_help_option=False)
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def command(args: tuple[str, ...]) -> None:
        importlib.import_module(module).main(list(args))

    command.help = short + " Flags: see --help."
    return command


for _name, _module, _short in _COMPONENTS:
    run.add_command(_component(_name, _module, _short))
