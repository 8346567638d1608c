"""Executes a :class:`~kubetide.cluster.loop.scaleup_decision.ScaleUpDecision` (CA spec §6.6): raise each
planned group's target through the cloud port, register the scale-up with the cluster state, and
record the events CA records (``ScaledUpGroup`` before and after, ``TriggeredScaleUp`` on the helped
pods, ``NotTriggerScaleUp`` on the others).

A failed ``IncreaseSize`` backs the group off (``cloudProviderError``) and stops the plan there, as
upstream does: the groups after it were balanced against it, so they are re-planned next loop. An
all-or-nothing plan (a ProvisioningRequest's) raises each group with ``AtomicIncreaseSize``, or, where
the provider has none, ``IncreaseSize`` (``scaleUpExecutor.increaseSize``), noting the group in
``LoopContext.atomic_fallbacks``.
"""

from __future__ import annotations

from kubetide.cloud.instance import (
    CloudProviderError,
    ErrorClass,
    InstanceErrorInfo,
    NotImplementedByProvider,
)
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.loop.context import LoopContext, Recorder
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason, ScaleUpResult
from kubetide.cluster.scaleup.balance import ScaleUpInfo

__all__ = ["execute_scale_up"]


def execute_scale_up(
    loop: LoopContext, decision: ScaleUpDecision, registry: ClusterStateRegistry, recorder: Recorder
) -> list[ScaleUpInfo]:
    """Run the decision; returns the groups actually scaled (empty: nothing changed in the cloud)."""
    loop.result.scale_up_result = decision.result
    plan = decision.plan
    executed: list[ScaleUpInfo] = []
    if plan is not None:
        for ev in plan.events:
            recorder.cluster_event(loop, ev)
        for info in plan.infos:
            if not _increase(loop, info, registry, recorder, plan.atomic):
                break
            executed.append(info)
    if plan is not None and executed:
        registry.recalculate()
        text = "[" + " ".join(str(i) for i in executed) + "]"
        groups_data = [{"group": i.group, "from": i.current_size, "to": i.new_size} for i in executed]
        first = groups_data[0]
        for p in plan.pods_triggered:
            recorder.emit(
                loop,
                CAEvent(
                    "Normal",
                    str(EventReason.TRIGGERED_SCALE_UP),
                    f"Pod/{p.namespace}/{p.name}",
                    f"pod triggered scale-up: {text}",
                    {"groups": groups_data, **first},
                ),
            )
    for event in decision.events:
        recorder.emit(loop, event)
    if not executed:
        for event in decision.not_triggered():
            recorder.emit(loop, event)
    return executed


def _increase(
    loop: LoopContext,
    info: ScaleUpInfo,
    registry: ClusterStateRegistry,
    recorder: Recorder,
    atomic: bool = False,
) -> bool:
    group = loop.groups[info.group]
    data = {"group": info.group, "from": info.current_size, "to": info.new_size}
    recorder.emit(
        loop,
        CAEvent(
            "Normal",
            str(EventReason.SCALED_UP_GROUP),
            f"NodeGroup/{info.group}",
            f"Scale-up: setting group {info.group} size to {info.new_size} instead of "
            f"{info.current_size} (max: {info.max_size})",
            data,
        ),
    )
    try:
        if atomic:
            try:
                group.atomic_increase_size(info.delta)
            except NotImplementedByProvider:
                group.increase_size(info.delta)
                loop.atomic_fallbacks.append(info.group)
        else:
            group.increase_size(info.delta)
    except CloudProviderError as exc:
        recorder.emit(
            loop,
            CAEvent(
                "Warning",
                str(EventReason.FAILED_TO_SCALE_UP_GROUP),
                f"NodeGroup/{info.group}",
                f"Scale-up failed for group {info.group}: {exc}",
                {"group": info.group},
            ),
        )
        error = InstanceErrorInfo(ErrorClass.Other, "cloudProviderError", str(exc))
        registry.register_failed_scale_up(info.group, error, loop.now)
        loop.result.stats.failed_scale_ups += 1
        loop.failed_scale_ups["cloudProviderError"] = loop.failed_scale_ups.get("cloudProviderError", 0) + 1
        recorder.backoff_event(loop, registry, info.group)
        loop.result.scale_up_result = str(ScaleUpResult.ERROR)
        return False
    registry.register_scale_up(info.group, info.delta, loop.now)
    loop.result.stats.scale_ups += 1
    loop.result.stats.nodes_added += info.delta
    recorder.emit(
        loop,
        CAEvent(
            "Normal",
            str(EventReason.SCALED_UP_GROUP),
            f"NodeGroup/{info.group}",
            f"Scale-up: group {info.group} size set to {info.new_size} instead of "
            f"{info.current_size} (max: {info.max_size})",
            data,
        ),
    )
    return True
