"""Escalator's shadow: kubetide's Escalator loop in dry mode (it decides on its in-memory taint tracker
and calls nothing) beside the Escalator that acts, each group's decision compared with what the acting
one did to the group: a raised target (a scale-up), nodes newly tainted for removal (a scale-down of
that many; Escalator deletes them minutes later, which is not a new decision). A group kubetide
would have left alone is "kept" with its decision's reasons, which explain an action of the acting
Escalator that kubetide would not have made.

Groups are the cloud groups the node groups file names (``cloud_provider_group_name``): the acting
Escalator's targets are the provider's, its taints are on the group's nodes (by the file's label).
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.cloud.provider import CloudProvider, CloudProviderError
from kubetide.escalator import EscalatorDriver, NodeGroupOptions
from kubetide.escalator.decision import EscalatorDecision
from kubetide.escalator.result import GroupRun
from kubetide.escalator.taints import has_taint
from kubetide.escalator.world import EscalatorWorldSource
from kubetide.live.shadow.compare import SCALE_DOWN, SCALE_UP, Action, Kept, ShadowLoop, Step
from kubetide.live.shadow.observe import ClusterLook, running_actions
from kubetide.live.shadow.shadow import ShadowLoopFailed, ShadowRecorder, ShadowTick

__all__ = ["EscalatorShadow", "escalator_intents", "escalator_kept"]


def _why(d: EscalatorDecision) -> str:
    usage = f"cpu {d.cpu_percent:.0f}%, memory {d.mem_percent:.0f}% of the untainted nodes"
    return f"{'; '.join(str(r) for r in d.reasons)} ({usage})" if d.reasons else usage


def escalator_kept(runs: Sequence[GroupRun]) -> dict[str, Kept]:
    """Each cloud group kubetide would have left as it is, and why (its decision's reasons): what
    explains a scale-up or a scale-down of the acting Escalator that kubetide would not have made."""
    return {
        run.options.cloud_provider_group_name: Kept(_why(run.decision))
        for run in runs
        if run.decision is not None
        and run.options is not None
        and run.decision.delta == 0
        and run.options.cloud_provider_group_name
    }


def escalator_intents(runs: Sequence[GroupRun], targets: dict[str, int], now: float) -> tuple[Action, ...]:
    """Each group's decision as an intent on its cloud group: its delta, its reasons."""
    out: list[Action] = []
    for run in runs:
        d, opts = run.decision, run.options
        if d is None or opts is None or d.delta == 0 or not opts.cloud_provider_group_name:
            continue
        group = opts.cloud_provider_group_name
        why = _why(d)
        kind = SCALE_UP if d.delta > 0 else SCALE_DOWN
        out.append(Action(kind, group, group, now, amount=abs(d.delta), size=targets.get(group, -1), why=why))
    return tuple(out)


class EscalatorShadow:
    """``driver`` must run in dry mode; ``provider`` is the raw provider (the acting one's targets)."""

    def __init__(
        self,
        driver: EscalatorDriver,
        world: EscalatorWorldSource,
        provider: CloudProvider,
        groups: Sequence[NodeGroupOptions],
        recorder: ShadowRecorder,
    ) -> None:
        if not driver.dry_run:
            raise ValueError("the Escalator shadow needs a dry-mode driver (EscalatorDriver(dry_run=True))")
        self.driver = driver
        self.world = world
        self.provider = provider
        self.groups = tuple(g for g in groups if g.cloud_provider_group_name)
        self.recorder = recorder
        self.last_look: ClusterLook | None = None

    def tick(self, now: float) -> ShadowTick:
        result = self.driver.tick(now)  # refreshes the provider first
        try:
            by_id = {g.id(): g for g in self.provider.node_groups()}
            wanted = {g.cloud_provider_group_name for g in self.groups}
            targets = {gid: by_id[gid].target_size() for gid in sorted(wanted) if gid in by_id}
        except CloudProviderError as exc:
            raise ShadowLoopFailed(f"failed to read the cloud provider: {exc}") from exc
        nodes: dict[str, str] = {}
        removing: dict[str, str] = {}
        for node in self.world.nodes():
            for g in self.groups:
                if node.labels.get(g.label_key) == g.label_value:
                    (removing if has_taint(node) else nodes)[node.name] = g.cloud_provider_group_name
                    break
        look = ClusterLook(now, targets, nodes, removing)
        running = running_actions(self.last_look, look, group_scale_downs=True)
        loop = ShadowLoop(
            now, escalator_intents(result.groups, targets, now), kept=escalator_kept(result.groups)
        )
        counts: dict[str, int] = {}
        for gid in nodes.values():
            counts[gid] = counts.get(gid, 0) + 1
        timeline = {"targets": targets, "nodes": {g: counts.get(g, 0) for g in targets}}
        self.last_look = look
        return self.recorder.step(Step(loop, running, targets), timeline)
