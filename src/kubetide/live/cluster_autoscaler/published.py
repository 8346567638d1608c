"""What the live cluster autoscaler publishes about its loops, for ``kubetide explain --cluster``.

- ``/debug/plan`` on ``--address`` (:meth:`PublishedPlans.page`): the last loop (its results, its plan
  phase by phase with the reasons and the expander's trace, and ``kubetide explain --json``'s
  explanation, made by the same function), the last loop that planned a scale-up (later loops, with
  the pods on their way, say nothing of it), and the last :data:`KEPT_DELETIONS` node deletions the
  loops started, each with why the node was chosen and how its deletion ended. ``?node=NAME`` answers
  for one node, ``?group=NAME`` for one group.

The reporter (:mod:`.reporter`) logs the same plan at ``-v=4``, one compact block per loop.

The record is this process's: a restarted or newly elected replica starts it afresh. The loop thread
calls :meth:`PublishedPlans.observe`; the HTTP thread reads the record, which ``observe`` replaces
whole and never changes. A loop's explanation is computed when a page first asks for it (from the
loop's frozen decisions and the world it read), not every loop.

:func:`read_page` reads the page back, for ``kubetide explain --cluster``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kubetide.cluster.explain import Explanation, ExplanationFormatError, explain_loop
from kubetide.cluster.explain_cluster import NodeDeletion, update_deletions
from kubetide.cluster.loop.plan_document import loop_document
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.world import World
from kubetide.cluster.status import format_rfc3339

__all__ = ["KEPT_DELETIONS", "PAGE_PATH", "PublishedLoop", "PublishedPage", "PublishedPlans", "read_page"]

PAGE_PATH = "/debug/plan"
KEPT_DELETIONS = 100


class _Loop:
    """One loop as published: its result and the world it read; the explanation made once, on demand."""

    def __init__(self, result: LoopResult, world: World | None, at: float) -> None:
        self.result = result
        self.world = world
        self.at = at
        self._lock = threading.Lock()
        self._document: dict[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        with self._lock:
            if self._document is None:
                world = self.world
                explanation = explain_loop(self.result, self.at, world) if world is not None else None
                self._document = {
                    "time": format_rfc3339(self.at),
                    "loop": loop_document(self.result, self.at),
                    "explanation": explanation.to_json() if explanation is not None else None,
                }
                self.world = None  # what the explanation needed: no longer kept
            return self._document


@dataclass(frozen=True, slots=True)
class _Record:
    """Everything the page shows, replaced whole after each loop or pass (the HTTP thread reads one)."""

    loops: int = 0
    latest: _Loop | None = None
    last_scale_up: _Loop | None = None
    deletions: tuple[NodeDeletion, ...] = ()


class PublishedPlans:
    def __init__(self, *, mode: str = "acting", keep_deletions: int = KEPT_DELETIONS) -> None:
        self.mode = mode  # acting | dry-run | shadow
        self.keep_deletions = keep_deletions
        self._record = _Record()

    # --- the loop's side ---------------------------------------------------------------------------

    def observe(self, result: LoopResult, world: World | None, now: float) -> None:
        """After a loop: ``world`` is what it read (None: it could not read one)."""
        loop, was = _Loop(result, world, now), self._record
        decision = result.plan.scale_up if result.plan is not None else None
        scaled_up = decision is not None and decision.plan is not None and bool(decision.plan.infos)
        self._record = _Record(
            was.loops + 1,
            loop,
            loop if scaled_up else was.last_scale_up,
            tuple(update_deletions(was.deletions, result, now, keep=self.keep_deletions)),
        )

    def observe_deletions(self, result: LoopResult, now: float) -> None:
        """After a deletions pass between loops (a drain's step at its time)."""
        was = self._record
        deletions = tuple(update_deletions(was.deletions, result, now, keep=self.keep_deletions))
        self._record = replace(was, deletions=deletions)

    # --- the HTTP side -----------------------------------------------------------------------------

    def page(self, query: Mapping[str, str]) -> tuple[int, Any]:
        """``/debug/plan``: everything, or ``?node=NAME`` / ``?group=NAME`` alone."""
        record = self._record
        latest, last_up = record.latest, record.last_scale_up
        doc: dict[str, Any] = {
            "component": "cluster-autoscaler",
            "mode": self.mode,
            "loops": record.loops,
            "latest": latest.document() if latest is not None else None,
            "lastScaleUp": last_up.document() if last_up is not None else None,
            "deletions": [d.to_json() for d in record.deletions],
        }
        node, group = query.get("node"), query.get("group")
        if node is not None:
            return _node_page(doc, node)
        if group is not None:
            return 200, _group_page(doc, group)
        return 200, doc


def _node_page(doc: dict[str, Any], node: str) -> tuple[int, Any]:
    deletions = [d for d in doc["deletions"] if d["node"] == node]
    explanation = (doc["latest"] or {}).get("explanation") or {}
    nodes = [n for n in (explanation.get("scaleDown") or {}).get("nodes", []) if n["node"] == node]
    if not deletions and not nodes:
        return 404, {"error": f"no node {node} in the last loop, nor among the deletions kept"}
    return 200, {"node": node, "lastLoop": nodes[0] if nodes else None, "deletions": deletions}


def _group_page(doc: dict[str, Any], group: str) -> dict[str, Any]:
    def scale_up(loop: dict[str, Any] | None) -> dict[str, Any] | None:
        plan = (loop or {}).get("loop", {}).get("plan") or {}
        return next((p for p in plan.get("phases", []) if p["phase"] == "scaleUp"), None)

    return {
        "group": group,
        "latest": scale_up(doc["latest"]),
        "lastScaleUp": scale_up(doc["lastScaleUp"]),
        "deletions": [d for d in doc["deletions"] if d["group"] == group],
    }


# --- the page read back ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PublishedLoop:
    at: float
    explanation: Explanation
    document: Mapping[str, Any]  # the loop's results and plan, as served


@dataclass(frozen=True, slots=True)
class PublishedPage:
    mode: str
    loops: int
    latest: PublishedLoop | None
    last_scale_up: PublishedLoop | None
    deletions: tuple[NodeDeletion, ...]


def read_page(doc: Any, where: str) -> PublishedPage:
    """The whole page as :meth:`PublishedPlans.page` serves it; raises ExplanationFormatError."""
    if not isinstance(doc, Mapping) or doc.get("component") != "cluster-autoscaler":
        raise ExplanationFormatError(f"{where}: not a cluster autoscaler's {PAGE_PATH} page")
    raw = doc.get("deletions")
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ExplanationFormatError(f"{where}: deletions: must be a list")
    return PublishedPage(
        mode=str(doc.get("mode")),
        loops=int(doc.get("loops") or 0),
        latest=_loop(doc.get("latest"), f"{where}: latest"),
        last_scale_up=_loop(doc.get("lastScaleUp"), f"{where}: lastScaleUp"),
        deletions=tuple(NodeDeletion.from_json(d, f"{where}: deletions[{i}]") for i, d in enumerate(raw)),
    )


def _loop(doc: Any, where: str) -> PublishedLoop | None:
    if doc is None:
        return None
    if not isinstance(doc, Mapping) or not isinstance(doc.get("loop"), Mapping):
        raise ExplanationFormatError(f"{where}: must be a loop (time, loop, explanation)")
    if doc.get("explanation") is None:
        return None  # a loop that could not read the cluster: nothing to explain
    explanation = Explanation.from_json(doc["explanation"], f"{where}.explanation")
    return PublishedLoop(explanation.at, explanation, doc["loop"])
