"""Sub-commands of the ``kubetide`` CLI, one module each, listed in one place."""

from __future__ import annotations

import importlib

import click

# (module, attribute) of each top-level command, in the order ``--help`` lists them.
_COMMANDS: tuple[tuple[str, str], ...] = (
    ("kubetide.commands.run", "run"),
    ("kubetide.commands.hpa", "hpa"),
    ("kubetide.commands.node_agent", "node_agent"),
    ("kubetide.commands.simulate", "simulate"),
    ("kubetide.commands.validate", "validate"),
    ("kubetide.commands.sweep", "sweep"),
    ("kubetide.commands.explain", "explain"),
    ("kubetide.commands.compare", "compare"),
    ("kubetide.commands.scenario", "scenario"),
    ("kubetide.commands.shadow", "shadow"),
)


def registered_commands() -> list[click.Command]:
    return [getattr(importlib.import_module(mod), attr) for mod, attr in _COMMANDS]
