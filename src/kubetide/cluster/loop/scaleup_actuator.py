"""Executes a :class:`~kubetide.cluster.loop.scaleup_decision.ScaleUpDecision` (CA spec §6.6): raise each
planned group's target through the cloud port, register the scale-up with the cluster state, and
record the events CA records (``ScaledUpGroup`` before and after, ``TriggeredScaleUp`` on the helped
pods, ``NotTriggerScaleUp`` on the others).

A failed ``IncreaseSize`` backs the group off (``cloudProviderError``) and stops the plan there, as
upstream does: the groups after it were balanced against it, so they are re-planned next loop. The
cluster state is told of each outcome (``RegisterScaleUp``, ``RegisterFailedScaleUp``).
All-or-nothing plans (a ProvisioningRequest's) raise each group with ``AtomicIncreaseSize``, or, where
the provider has none, ``IncreaseSize`` (``scaleUpExecutor.increaseSize``), noting the group in the
outcome's ``atomic_fallbacks`` (and the provider's note of its route, if it gives one, in ``atomic_routes``).
"""

from __future__ import annotations

from kubetide.cloud.instance import (
    CloudProviderError,
    ErrorClass,
    InstanceErrorInfo,
    NotImplementedByProvider,
)
from kubetide.cluster.loop.execution import Execution
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import EventReason
from kubetide.cluster.scaleup.balance import ScaleUpInfo

__all__ = ["execute_scale_up"]


def execute_scale_up(run: Execution, decision: ScaleUpDecision) -> None:
    """Run the decision; the groups actually scaled go to ``run.outcome.scaled_up`` (none: nothing
    changed in the cloud)."""
    plan = decision.plan
    executed: list[ScaleUpInfo] = []
    if plan is not None:
        for event in decision.plan_events:
            run.emit(event)
        for info in plan.infos:
            if not _increase(run, info, plan.atomic):
                break
            executed.append(info)
    run.outcome.scaled_up += executed
    if plan is not None and executed:
        run.registry.recalculate()
        text = "[" + " ".join(str(i) for i in executed) + "]"
        groups_data = [{"group": i.group, "from": i.current_size, "to": i.new_size} for i in executed]
        first = groups_data[0]
        for p in plan.pods_triggered:
            run.emit(
                CAEvent(
                    "Normal",
                    str(EventReason.TRIGGERED_SCALE_UP),
                    f"Pod/{p.namespace}/{p.name}",
                    f"pod triggered scale-up: {text}",
                    {"groups": groups_data, **first},
                )
            )
    for event in decision.events:
        run.emit(event)
    if not executed:
        for event in decision.not_triggered():
            run.emit(event)


def _increase(run: Execution, info: ScaleUpInfo, atomic: bool = False) -> bool:
    group = run.groups[info.group]
    data = {"group": info.group, "from": info.current_size, "to": info.new_size}
    run.emit(
        CAEvent(
            "Normal",
            str(EventReason.SCALED_UP_GROUP),
            f"NodeGroup/{info.group}",
            f"Scale-up: setting group {info.group} size to {info.new_size} instead of "
            f"{info.current_size} (max: {info.max_size})",
            data,
        )
    )
    try:
        if atomic:
            try:
                route = group.atomic_increase_size(info.delta)
                if route:
                    run.outcome.atomic_routes[info.group] = route
            except NotImplementedByProvider:
                group.increase_size(info.delta)
                run.outcome.atomic_fallbacks.append(info.group)
        else:
            group.increase_size(info.delta)
    except CloudProviderError as exc:
        run.outcome.fail("increase_size", f"NodeGroup/{info.group}", exc)
        run.emit(
            CAEvent(
                "Warning",
                str(EventReason.FAILED_TO_SCALE_UP_GROUP),
                f"NodeGroup/{info.group}",
                f"Scale-up failed for group {info.group}: {exc}",
                {"group": info.group},
            )
        )
        error = InstanceErrorInfo(ErrorClass.Other, "cloudProviderError", str(exc))
        run.registry.register_failed_scale_up(info.group, error, run.now)
        run.outcome.stats.failed_scale_ups += 1
        run.outcome.count(run.outcome.failed_scale_ups, "cloudProviderError")
        run.backed_off(info.group)
        run.outcome.scale_up_failed = True
        return False
    run.registry.register_scale_up(info.group, info.delta, run.now)
    run.outcome.stats.scale_ups += 1
    run.outcome.stats.nodes_added += info.delta
    run.emit(
        CAEvent(
            "Normal",
            str(EventReason.SCALED_UP_GROUP),
            f"NodeGroup/{info.group}",
            f"Scale-up: group {info.group} size set to {info.new_size} instead of "
            f"{info.current_size} (max: {info.max_size})",
            data,
        )
    )
    return True
