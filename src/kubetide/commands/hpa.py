"""``kubetide hpa ...``: the HPA decision, explained."""

from __future__ import annotations

import click


@click.group()
def hpa() -> None:
    """Horizontal Pod Autoscaler tools."""
