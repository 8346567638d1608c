"""``kubetide explain --cluster``: why a running cluster autoscaler did what it did, from its
``/debug/plan`` (read only).

The last loop is explained as ``explain --at`` explains a simulated one (the same rendering); the last
loop that scaled up beside it, when it was an earlier one (later loops see the pods on their way and
say nothing of them); and the node deletions the process started, each with why the scale-down chose
the node and how its deletion ended. ``--node``, ``--pod`` and ``--group`` narrow it: a node deleted
is answered from its deletion, a group from every word the scale-ups said of it.

Exit codes: 0 explained; 1 the address did not answer as a cluster autoscaler; 2 bad input (a node,
pod or group it cannot answer for).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

from kubetide.cluster.explain import Explanation, render_text
from kubetide.cluster.explain_cluster import NodeDeletion, explain_group, render_deletions, render_group
from kubetide.live.cluster_autoscaler.explain_inputs import PlanPageUnreachable, fetch_page
from kubetide.live.cluster_autoscaler.published import PublishedLoop, PublishedPage

__all__ = ["explain_cluster"]

EXIT_INVALID = 2


def explain_cluster(
    address: str, pods: Sequence[str], nodes: Sequence[str], groups: Sequence[str], as_json: bool
) -> None:
    try:
        page = fetch_page(address)
    except PlanPageUnreachable as exc:
        click.echo(f"kubetide explain --cluster: {exc}", err=True)
        sys.exit(1)
    latest, last_up = page.latest, page.last_scale_up
    if latest is None:
        _invalid(
            address,
            ["the cluster autoscaler has not explained a loop yet (none ran, or none read the cluster)"],
        )
        return
    if last_up is not None and last_up.at == latest.at:
        last_up = None  # the last loop is the last scale-up: said once
    asked = _Question(address, page, latest, last_up, tuple(pods), tuple(nodes), tuple(groups))
    problems = asked.unanswered()
    if problems:
        _invalid(address, problems)
    if as_json:
        click.echo(json.dumps(asked.document(), indent=2))
        return
    click.echo(asked.text(), nl=False)


@dataclass(frozen=True)
class _Question:
    """What was asked of the page: everything, or ``--pod``, ``--node`` and ``--group``."""

    address: str
    page: PublishedPage
    latest: PublishedLoop
    last_up: PublishedLoop | None  # None: the last loop is the last scale-up, or none scaled up
    pods: tuple[str, ...]
    nodes: tuple[str, ...]
    groups: tuple[str, ...]

    @property
    def narrowed(self) -> bool:
        return bool(self.pods or self.nodes or self.groups)

    @property
    def loops(self) -> list[PublishedLoop]:
        return [self.latest] if self.last_up is None else [self.latest, self.last_up]

    def unanswered(self) -> list[str]:
        pending = {p.pod for loop in self.loops for p in loop.explanation.pods}
        known_nodes = {n.node for n in self.latest.explanation.nodes} | {d.node for d in self.page.deletions}
        count = len(self.page.deletions)
        kept = f"the last {count} deletion(s) kept" if count else "no deletion kept"
        out = [
            f"--pod {p}: not a pending pod in the last loop, nor in the last scale-up"
            for p in self.pods
            if p not in pending
        ]
        out += [
            f"--node {n}: not in the last loop, nor among {kept} (the record is the running process's)"
            for n in self.nodes
            if n not in known_nodes
        ]
        return out

    def deletions(self) -> list[NodeDeletion]:
        """All of them, or those of the nodes and groups asked about (none for ``--pod`` alone)."""
        if self.narrowed and not (self.nodes or self.groups):
            return []
        nodes, groups = self.nodes, self.groups
        return [
            d
            for d in self.page.deletions
            if (not nodes or d.node in nodes) and (not groups or d.group in groups)
        ]

    def document(self) -> dict[str, Any]:
        last_up = self.last_up
        return {
            "source": self.address,
            "mode": self.page.mode,
            "loops": self.page.loops,
            "latest": self._narrowed(self.latest.explanation),
            "lastScaleUp": self._narrowed(last_up.explanation) if last_up is not None else None,
            "deletions": [d.to_json() for d in self.deletions()],
            "groups": {
                g: [explain_group(loop.explanation, g).to_json() for loop in self.loops] for g in self.groups
            },
        }

    def _narrowed(self, ex: Explanation) -> dict[str, Any]:
        doc = ex.to_json()
        if self.pods:
            doc["pods"] = [p for p in doc["pods"] if p["pod"] in self.pods]
        if self.nodes:
            doc["scaleDown"]["nodes"] = [n for n in doc["scaleDown"]["nodes"] if n["node"] in self.nodes]
        return doc

    def text(self) -> str:
        page, latest, last_up = self.page, self.latest.explanation, self.last_up
        out = [f"Cluster autoscaler at {self.address} ({page.mode}; {page.loops} loops since it started)"]
        if page.mode == "dry-run":
            out.append(
                "A dry run: every scale-up and deletion below was only said (logged), nothing was changed."
            )
        elif page.mode == "shadow":
            out.append(
                "A shadow beside the autoscaler that acts: every scale-up and deletion below is what kubetide "
                "would have done; nothing was changed."
            )
        out.append("")
        latest_pods = [p for p in self.pods if p in {x.pod for x in latest.pods}]
        latest_nodes = [n for n in self.nodes if n in {x.node for x in latest.nodes}]
        if not self.narrowed or latest_pods or latest_nodes:
            out.append(render_text(latest, latest_pods or None, latest_nodes or None))
        if last_up is not None:
            up_pods = [p for p in self.pods if p in {x.pod for x in last_up.explanation.pods}]
            if not self.narrowed or up_pods:
                shown = up_pods or [p.pod for p in last_up.explanation.pods]
                out += ["The last loop that scaled up:", render_text(last_up.explanation, shown, None)]
        for g in self.groups:
            for loop in self.loops:
                out += [*render_group(explain_group(loop.explanation, g)), ""]
        deletions = self.deletions()
        if deletions:
            out += [
                "Node deletions this cluster autoscaler started (newest first):",
                *render_deletions(deletions),
            ]
        elif not self.narrowed:
            out.append("Node deletions this cluster autoscaler started: none since it started")
        return "\n".join(out).rstrip("\n") + "\n"


def _invalid(source: str, problems: list[str]) -> None:
    count = len(problems)
    click.echo(f"{source}: cannot explain ({count} problem{'s' if count != 1 else ''}):", err=True)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    sys.exit(EXIT_INVALID)
