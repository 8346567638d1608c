"""``HorizontalController``: one reconcile of one HPA, exactly as kube-controller-manager's
``reconcileAutoscaler``, through two ports (metrics, scale target) and with ``now`` passed in.

The controller keeps per-HPA memory (recommendations, scale events) across calls, like upstream's
in-memory maps; a new controller is a restarted one. It reads no clock and does no I/O itself, so the
simulator and the live adapter run this same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubetide.hpa.behavior import store_scale_event
from kubetide.hpa.conditions import ConditionType, EventReason, remove_condition, set_condition
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.decision import Event, MetricOutcome, Normalization, SyncResult
from kubetide.hpa.normalization import normalize
from kubetide.hpa.podindex import PodIndex
from kubetide.hpa.ports import MetricsSource, ScaleError, ScaleTargetPort
from kubetide.hpa.selectors import SelectorProblem, SelectorRegistry
from kubetide.hpa.sources import MetricContext, MetricFailure, compute_metric
from kubetide.hpa.state import HPAState, Recommendation
from kubetide.hpa.tolerances import tolerances_for
from kubetide.model.hpa import HPA, Condition, HPAStatus
from kubetide.model.pod import Pod

__all__ = ["HorizontalController"]

_ACTIVE = ConditionType.SCALING_ACTIVE
_ABLE = ConditionType.ABLE_TO_SCALE


@dataclass
class _Sync:
    """Mutable scratch of one reconcile; turned into a frozen SyncResult at the end."""

    hpa: HPA
    now: float
    conditions: list[Condition]
    events: list[Event]

    def condition(self, type_: str, status: bool, reason: str, message: str) -> None:
        set_condition(self.conditions, type_, "True" if status else "False", reason, message, self.now)

    def event(self, warning: bool, reason: str, message: str) -> None:
        self.events.append(Event("Warning" if warning else "Normal", reason, message))


class HorizontalController:
    """Reconciles HPAs one at a time: ``reconcile(hpa, now)`` returns a :class:`SyncResult`."""

    def __init__(
        self, metrics: MetricsSource, targets: ScaleTargetPort, config: HPAConfig | None = None
    ) -> None:
        self.metrics = metrics
        self.targets = targets
        self.config = config or HPAConfig()
        self._states: dict[str, HPAState] = {}
        self.selectors = SelectorRegistry()
        self._pod_indexes: dict[str, tuple[Sequence[Pod], PodIndex]] = {}

    def state(self, key: str) -> HPAState:
        """The remembered recommendations and scale events of an HPA (``namespace/name``)."""
        return self._states.setdefault(key, HPAState())

    def restore(self, key: str, state: HPAState) -> None:
        """Install remembered state (a snapshot's, or one carried over on purpose)."""
        self._states[key] = state

    def forget(self, key: str) -> None:
        """The HPA was deleted: drop what was remembered for it."""
        self._states.pop(key, None)
        self._pod_indexes.pop(key, None)
        self.selectors.remove(key)

    def register(self, hpa: HPA) -> None:
        """The informer saw this HPA (upstream registers it before its first sync)."""
        self.selectors.register(hpa.key, hpa.namespace)

    def reconcile(self, hpa: HPA, now: float) -> SyncResult:
        sync = _Sync(hpa, now, list(hpa.status.conditions), [])
        self.register(hpa)
        try:
            scale = self.targets.get_scale(hpa.namespace, hpa.scale_target_ref)
        except ScaleError as exc:
            sync.event(True, EventReason.FAILED_GET_SCALE, str(exc))
            sync.condition(
                _ABLE,
                False,
                "FailedGetScale",
                f"the HPA controller was unable to get the target's current scale: {exc}",
            )
            ref = hpa.scale_target_ref
            return self._result(
                sync,
                None,
                hpa.status.desired_replicas,
                False,
                hpa.status.current_replicas,
                error=f"failed to query scale subresource for {ref.kind}/{hpa.namespace}/{ref.name}: {exc}",
            )
        sync.condition(
            _ABLE, True, "SucceededGetScale", "the HPA controller was able to get the target's current scale"
        )
        current = scale.spec_replicas
        state = self.state(hpa.key)
        if state.recommendations is None:
            state.recommendations = [Recommendation(current, now)]

        gates = self.config.gates
        min_replicas, max_replicas = hpa.min_replicas, hpa.max_replicas
        has_object_or_external = any(m.type in ("Object", "External") for m in hpa.metrics)
        zero_condition = hpa.status.condition(ConditionType.SCALED_TO_ZERO)
        scaled_to_zero = (
            gates.hpa_scale_to_zero and zero_condition is not None and zero_condition.status == "True"
        )

        desired, rescale, reason = 0, True, ""
        needs_metrics = True
        if current == 0:
            if not ((min_replicas != 0 and scaled_to_zero) or (scaled_to_zero and has_object_or_external)):
                needs_metrics, rescale = False, False
                sync.condition(
                    _ACTIVE,
                    False,
                    "ScalingDisabled",
                    "scaling is disabled since the replica count of the target is zero",
                )
                if not gates.hpa_scale_to_zero:
                    remove_condition(sync.conditions, ConditionType.SCALED_TO_ZERO)
        elif current > max_replicas:
            desired, reason, needs_metrics = (
                max_replicas,
                "Current number of replicas above Spec.MaxReplicas",
                False,
            )
        elif current < min_replicas:
            desired, reason, needs_metrics = (
                min_replicas,
                "Current number of replicas below Spec.MinReplicas",
                False,
            )

        outcomes: tuple[MetricOutcome, ...] = ()
        statuses: list[dict[str, object]] = []
        normalization: Normalization | None = None
        error: str | None = None
        tolerances = tolerances_for(hpa, self.config)
        if needs_metrics:
            combined = self._compute_metrics(sync, scale.spec_replicas, scale.status_replicas, scale.selector)
            outcomes, statuses = combined.outcomes, combined.statuses
            if combined.abort:
                sync.event(True, EventReason.FAILED_COMPUTE_METRICS_REPLICAS, combined.error or "")
                ref = hpa.scale_target_ref
                return self._result(
                    sync,
                    current,
                    hpa.status.desired_replicas,
                    False,
                    current,
                    statuses,
                    outcomes,
                    error="failed to compute desired number of replicas based on listed metrics for "
                    f"{ref.kind}/{hpa.namespace}/{ref.name}: {combined.error}",
                    tolerances=(tolerances.down, tolerances.up),
                )
            error = combined.error
            metric_name = ""
            if combined.replicas > desired:
                desired, metric_name = combined.replicas, combined.metric_name
            if desired > current:
                reason = f"{metric_name} above target"
            if desired < current:
                reason = "All metrics below target"
            normalization = normalize(
                hpa,
                state,
                current,
                desired,
                min_replicas,
                now,
                self.config,
                lambda t, s, r, m: sync.condition(t, s, r, m),
            )
            desired = normalization.desired
            if current == 0 and min_replicas != 0 and scaled_to_zero and desired < min_replicas:
                desired = min_replicas
                reason = reason or "Current number of replicas below Spec.MinReplicas"
            rescale = desired != current

        if rescale:
            try:
                self.targets.update_scale(hpa.namespace, hpa.scale_target_ref, desired)
            except ScaleError as exc:
                sync.event(
                    True, EventReason.FAILED_RESCALE, f"New size: {desired}; reason: {reason}; error: {exc}"
                )
                sync.condition(
                    _ABLE,
                    False,
                    "FailedUpdateScale",
                    f"the HPA controller was unable to update the target scale: {exc}",
                )
                ref = hpa.scale_target_ref
                return self._result(
                    sync,
                    current,
                    hpa.status.desired_replicas,
                    False,
                    current,
                    statuses,
                    outcomes,
                    error=f"failed to rescale {ref.kind}/{hpa.namespace}/{ref.name}: {exc}",
                    normalization=normalization,
                    reason=reason,
                )
            sync.condition(
                _ABLE,
                True,
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            sync.event(False, EventReason.SUCCESSFUL_RESCALE, f"New size: {desired}; reason: {reason}")
            self._store_scale_event(hpa, state, current, desired, now)
            if gates.hpa_scale_to_zero:
                if current > 0 and desired == 0 and min_replicas == 0 and has_object_or_external:
                    sync.condition(
                        ConditionType.SCALED_TO_ZERO,
                        True,
                        "ScaledToZero",
                        "the HPA controller scaled the workload to zero",
                    )
                else:
                    sync.condition(
                        ConditionType.SCALED_TO_ZERO,
                        False,
                        "NotScaledToZero",
                        "the HPA controller did not scale the workload to zero",
                    )
            else:
                remove_condition(sync.conditions, ConditionType.SCALED_TO_ZERO)
        else:
            desired = current
        return self._result(
            sync,
            current,
            desired,
            rescale,
            current,
            statuses,
            outcomes,
            error=error,
            normalization=normalization,
            reason=reason,
            tolerances=(tolerances.down, tolerances.up),
        )

    # --- metrics ---------------------------------------------------------------------------------

    def _compute_metrics(
        self, sync: _Sync, spec_replicas: int, status_replicas: int, selector_text: str
    ) -> _Combined:
        hpa = sync.hpa
        try:
            selector = self.selectors.validate(hpa.key, hpa.namespace, selector_text, self.targets)
        except SelectorProblem as problem:
            sync.event(True, problem.event_reason, problem.event_message)
            sync.condition(_ACTIVE, False, problem.condition_reason, problem.condition_message)
            return _Combined(abort=True, error=problem.event_message)
        ctx = MetricContext(
            hpa,
            spec_replicas,
            status_replicas,
            selector,
            self.metrics,
            self.targets,
            self.config,
            tolerances_for(hpa, self.config),
            sync.now,
            self._pod_indexes,
        )
        outcomes: list[MetricOutcome] = []
        statuses: list[dict[str, object]] = []
        replicas, metric_name = 0, ""
        first_failure: MetricFailure | None = None
        invalid = 0
        for spec in hpa.metrics:
            try:
                result = compute_metric(ctx, spec)
            except MetricFailure as failure:
                sync.event(True, failure.reason, failure.message)
                outcomes.append(
                    MetricOutcome(spec, failure_reason=failure.reason, failure_message=failure.message)
                )
                statuses.append({})  # upstream leaves an empty MetricStatus for a failed metric
                if first_failure is None:
                    first_failure = failure
                invalid += 1
                continue
            outcomes.append(MetricOutcome(spec, result.replicas, result.name, result.calculation))
            statuses.append(result.status)
            if replicas == 0 or result.replicas > replicas:
                replicas, metric_name = result.replicas, result.name
        error = None
        if first_failure is not None:
            error = f"invalid metrics ({invalid} invalid out of {len(hpa.metrics)}), first error is: {first_failure.message}"
        # All metrics failed, or some did and the rest would scale down: hold (never scale down on partial data).
        if invalid >= len(hpa.metrics) or (invalid > 0 and replicas < spec_replicas):
            if first_failure is not None:
                sync.condition(
                    _ACTIVE,
                    False,
                    first_failure.reason,
                    f"the HPA was unable to compute the replica count: {first_failure.message}",
                )
            return _Combined(abort=True, error=error, outcomes=tuple(outcomes), statuses=statuses)
        sync.condition(
            _ACTIVE,
            True,
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {metric_name}",
        )
        return _Combined(False, error, tuple(outcomes), statuses, replicas, metric_name)

    # --- bookkeeping -----------------------------------------------------------------------------

    @staticmethod
    def _store_scale_event(hpa: HPA, state: HPAState, previous: int, new: int, now: float) -> None:
        behavior = hpa.behavior
        if behavior is None or behavior.scale_up is None or behavior.scale_down is None:
            return  # without behavior nothing reads the events
        if new > previous:
            store_scale_event(state.scale_up_events, behavior.scale_up, new - previous, now)
        else:
            store_scale_event(state.scale_down_events, behavior.scale_down, previous - new, now)

    def _result(
        self,
        sync: _Sync,
        current: int | None,
        desired: int,
        scaled: bool,
        status_current: int,
        statuses: Sequence[dict[str, object]] = (),
        outcomes: tuple[MetricOutcome, ...] = (),
        *,
        error: str | None = None,
        normalization: Normalization | None = None,
        reason: str = "",
        tolerances: tuple[float, float] | None = None,
    ) -> SyncResult:
        old = sync.hpa.status
        status = HPAStatus(
            current_replicas=status_current,
            desired_replicas=desired,
            conditions=tuple(sync.conditions),
            last_scale_time=sync.now if scaled else old.last_scale_time,
            current_metrics=tuple(statuses) if statuses or current is not None else old.current_metrics,
        )
        return SyncResult(
            sync.hpa.key,
            current,
            desired,
            scaled,
            status,
            tuple(sync.events),
            error,
            reason,
            outcomes,
            normalization,
            tolerances,
        )


@dataclass
class _Combined:
    abort: bool
    error: str | None = None
    outcomes: tuple[MetricOutcome, ...] = ()
    statuses: list[dict[str, object]] = field(default_factory=list)
    replicas: int = 0
    metric_name: str = ""
