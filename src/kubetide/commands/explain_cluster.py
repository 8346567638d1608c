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
from typing import Any

import click

from kubetide.cluster.explain import Explanation, render_text
from kubetide.cluster.explain_cluster import explain_group, render_deletions, render_group
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
    if latest is not None and last_up is not None and last_up.at == latest.at:
        last_up = None  # the last loop is the last scale-up: said once
    problems = _unanswered(page, latest, last_up, pods, nodes)
    if problems:
        _invalid(address, problems)
    if as_json:
        click.echo(json.dumps(_document(address, page, latest, last_up, pods, nodes, groups), indent=2))
        return
    click.echo(_text(address, page, latest, last_up, pods, nodes, groups), nl=False)


def _unanswered(
    page: PublishedPage,
    latest: PublishedLoop | None,
    last_up: PublishedLoop | None,
    pods: Sequence[str],
    nodes: Sequence[str],
) -> list[str]:
    if latest is None:
        return [
            "the cluster autoscaler has not explained a loop yet (none ran, or none could read the cluster)"
        ]
    pending = {p.pod for loop in (latest, last_up) if loop is not None for p in loop.explanation.pods}
    known_nodes = {n.node for n in latest.explanation.nodes} | {d.node for d in page.deletions}
    kept = f"the last {len(page.deletions)} deletion(s) kept" if page.deletions else "no deletion kept"
    out = [
        f"--pod {p}: not a pending pod in the last loop, nor in the last scale-up"
        for p in pods
        if p not in pending
    ]
    out += [
        f"--node {n}: not in the last loop, nor among {kept} (the record is the running process's)"
        for n in nodes
        if n not in known_nodes
    ]
    return out


def _narrowed(ex: Explanation, pods: Sequence[str], nodes: Sequence[str]) -> dict[str, Any]:
    doc = ex.to_json()
    if pods:
        doc["pods"] = [p for p in doc["pods"] if p["pod"] in pods]
    if nodes:
        doc["scaleDown"]["nodes"] = [n for n in doc["scaleDown"]["nodes"] if n["node"] in nodes]
    return doc


def _document(
    address: str,
    page: PublishedPage,
    latest: PublishedLoop | None,
    last_up: PublishedLoop | None,
    pods: Sequence[str],
    nodes: Sequence[str],
    groups: Sequence[str],
) -> dict[str, Any]:
    loops = [loop for loop in (latest, last_up) if loop is not None]
    return {
        "source": address,
        "mode": page.mode,
        "loops": page.loops,
        "latest": _narrowed(latest.explanation, pods, nodes) if latest is not None else None,
        "lastScaleUp": _narrowed(last_up.explanation, pods, nodes) if last_up is not None else None,
        "deletions": [
            d.to_json()
            for d in page.deletions
            if (not nodes or d.node in nodes) and (not groups or d.group in groups)
        ],
        "groups": {g: [explain_group(loop.explanation, g).to_json() for loop in loops] for g in groups},
    }


def _text(
    address: str,
    page: PublishedPage,
    latest: PublishedLoop | None,
    last_up: PublishedLoop | None,
    pods: Sequence[str],
    nodes: Sequence[str],
    groups: Sequence[str],
) -> str:
    assert latest is not None  # _unanswered said otherwise
    out = [f"Cluster autoscaler at {address} ({page.mode}; {page.loops} loops since it started)", ""]
    narrowed = bool(pods or nodes or groups)
    latest_pods = [p for p in pods if p in {x.pod for x in latest.explanation.pods}]
    latest_nodes = [n for n in nodes if n in {x.node for x in latest.explanation.nodes}]
    if not narrowed or latest_pods or latest_nodes:
        out.append(render_text(latest.explanation, latest_pods or None, latest_nodes or None))
    if last_up is not None:
        up_pods = [p for p in pods if p in {x.pod for x in last_up.explanation.pods}]
        if not narrowed or up_pods:
            shown = up_pods or [p.pod for p in last_up.explanation.pods]
            out += ["The last loop that scaled up:", render_text(last_up.explanation, shown, None)]
    for g in groups:
        for loop in (latest, last_up):
            if loop is not None:
                out += [*render_group(explain_group(loop.explanation, g)), ""]
    asked = not narrowed or bool(nodes or groups)  # --pod alone: no deletion is its answer
    deletions = [
        d
        for d in page.deletions
        if asked and (not nodes or d.node in nodes) and (not groups or d.group in groups)
    ]
    if deletions:
        out += [
            "Node deletions this cluster autoscaler started (newest first):",
            *render_deletions(deletions),
            "",
        ]
    elif not narrowed:
        out += ["Node deletions this cluster autoscaler started: none since it started", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _invalid(source: str, problems: list[str]) -> None:
    count = len(problems)
    click.echo(f"{source}: cannot explain ({count} problem{'s' if count != 1 else ''}):", err=True)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    sys.exit(EXIT_INVALID)
