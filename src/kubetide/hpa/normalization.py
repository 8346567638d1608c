"""From the metrics' proposal to the desired count (upstream's ``normalizeDesiredReplicas`` and its
``WithBehaviors`` twin): the no-behavior path (§6 of the spec, :mod:`.without_behavior`) or the behavior
path (§7, :mod:`.with_behavior`), setting AbleToScale and ScalingLimited as upstream does."""

from __future__ import annotations

from collections.abc import Callable

from kubetide.hpa import with_behavior
from kubetide.hpa.conditions import ConditionType
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.decision import Normalization
from kubetide.hpa.state import HPAState
from kubetide.hpa.without_behavior import apply_limits, stabilize_scale_down
from kubetide.model.hpa import HPA, default_scale_down_rules, default_scale_up_rules

SetCondition = Callable[[str, bool, str, str], None]

# AbleToScale True after stabilization: (reason, message) as upstream writes them.
READY_FOR_NEW_SCALE = ("ReadyForNewScale", "recommended size matches current size")
SCALE_DOWN_STABILIZED = (
    "ScaleDownStabilized",
    "recent recommendations were higher than current one, applying the highest recent recommendation",
)


def normalize(
    hpa: HPA,
    state: HPAState,
    current: int,
    proposal: int,
    min_replicas: int,
    now: float,
    config: HPAConfig,
    set_condition: SetCondition,
) -> Normalization:
    recommendations = state.recommendations if state.recommendations is not None else []
    state.recommendations = recommendations
    if hpa.behavior is None:
        stabilized = stabilize_scale_down(recommendations, proposal, now, config.downscale_stabilization)
        stab_reason, stab_message = SCALE_DOWN_STABILIZED if stabilized != proposal else READY_FOR_NEW_SCALE
        set_condition(ConditionType.ABLE_TO_SCALE, True, stab_reason, stab_message)
        desired, reason, message = apply_limits(
            current,
            stabilized,
            min_replicas,
            hpa.max_replicas,
            config.scale_up_limit_factor,
            config.scale_up_limit_minimum,
        )
    else:
        up = default_scale_up_rules(hpa.behavior.scale_up)
        down = default_scale_down_rules(hpa.behavior.scale_down)
        down_window = (
            down.stabilization_window_seconds
            if down.stabilization_window_seconds is not None
            else config.downscale_stabilization
        )
        stabilized, stab_reason, stab_message = with_behavior.stabilize(
            recommendations,
            current,
            proposal,
            now,
            float(up.stabilization_window_seconds or 0),
            float(down_window),
        )
        if stabilized == proposal:
            stab_reason, stab_message = READY_FOR_NEW_SCALE
        set_condition(ConditionType.ABLE_TO_SCALE, True, stab_reason, stab_message)
        desired, reason, message = with_behavior.apply_rate_limits(
            current,
            stabilized,
            min_replicas,
            hpa.max_replicas,
            up,
            down,
            state.scale_up_events,
            state.scale_down_events,
            now,
        )
    set_condition(ConditionType.SCALING_LIMITED, desired != stabilized, reason, message)
    return Normalization(
        proposal, stabilized, stab_reason, desired, reason, message, hpa.behavior is not None
    )
