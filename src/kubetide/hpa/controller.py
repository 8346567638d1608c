"""``HorizontalController``: one sync of one HPA, exactly as kube-controller-manager's
``reconcileAutoscaler``, through two ports (metrics, scale target) and with ``now`` passed in.

Split where upstream writes: ``decide`` does everything up to the scale update and returns a frozen
:class:`HPADecision` (writing neither the target nor its own memory); the caller performs the write and
hands the outcome to ``complete``, which finishes the sync as upstream does after ``Scales().Update``
(conditions, ``SuccessfulRescale``/``FailedRescale``, the memory committed). ``reconcile`` does all
three for callers that need nothing in between.

The controller keeps per-HPA memory (recommendations, scale events) across calls, like upstream's
in-memory maps; a new controller is a restarted one. It reads no clock and does no I/O itself, so the
simulator and the live adapter run this same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubetide.hpa.combine import MetricInputs, combine_metrics
from kubetide.hpa.conditions import (
    ConditionReason,
    ConditionType,
    EventReason,
    remove_condition,
    set_condition,
)
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.decision import (
    RESCALED,
    Event,
    HPADecision,
    MetricOutcome,
    Normalization,
    RescaleOutcome,
    ScaleEventChange,
    SyncResult,
)
from kubetide.hpa.normalization import normalize
from kubetide.hpa.podindex import PodIndex
from kubetide.hpa.ports import MetricsSource, ScaleError, ScaleTargetPort
from kubetide.hpa.selectors import SelectorRegistry
from kubetide.hpa.state import NEVER_SYNCED, HPAState, Recommendation, Remembered
from kubetide.hpa.tolerances import tolerances_for
from kubetide.hpa.with_behavior import store_scale_event
from kubetide.model.hpa import HPA, Condition, HPAStatus
from kubetide.model.pod import Pod

__all__ = ["HorizontalController"]

_ACTIVE = ConditionType.SCALING_ACTIVE
_ABLE = ConditionType.ABLE_TO_SCALE
_INVALID_MIN_REPLICAS = (
    "minReplicas is 0 but no metric is of type Object or External: scaling to zero needs one "
    "(the kubetide HorizontalPodAutoscaler allows minReplicas 0 only with such a metric)"
)


@dataclass
class _Sync:
    """Mutable scratch of one sync; turned into a frozen HPADecision, then a SyncResult."""

    hpa: HPA
    now: float
    conditions: list[Condition]
    events: list[Event]
    remembered: Remembered = NEVER_SYNCED

    def condition(self, type_: str, status: bool, reason: str, message: str) -> None:
        set_condition(self.conditions, type_, "True" if status else "False", reason, message, self.now)

    def event(self, warning: bool, reason: str, message: str) -> None:
        self.events.append(Event("Warning" if warning else "Normal", reason, message))

    def decision(
        self,
        current: int | None,
        desired: int,
        statuses: tuple[dict[str, object], ...] | None,
        *,
        rescale: bool = False,
        error: str | None = None,
        reason: str = "",
        metrics: tuple[MetricOutcome, ...] = (),
        normalization: Normalization | None = None,
        tolerances: tuple[float, float] | None = None,
        recommendations: Sequence[Recommendation] | None = None,
        scale_event: ScaleEventChange | None = None,
    ) -> HPADecision:
        return HPADecision(
            self.hpa,
            self.now,
            current,
            desired,
            rescale,
            reason,
            tuple(self.conditions),
            tuple(self.events),
            statuses,
            error,
            metrics,
            normalization,
            tolerances,
            tuple(recommendations) if recommendations is not None else None,
            scale_event,
            self.remembered,
        )

    def result(self, decision: HPADecision, desired: int, *, scaled: bool, error: str | None) -> SyncResult:
        return _result(decision, tuple(self.conditions), tuple(self.events), desired, scaled, error, self.now)


def _result(
    decision: HPADecision,
    conditions: tuple[Condition, ...],
    events: tuple[Event, ...],
    desired: int,
    scaled: bool,
    error: str | None,
    now: float,
) -> SyncResult:
    hpa = decision.hpa
    old = hpa.status
    current = decision.current_replicas
    statuses = decision.metric_statuses
    status = HPAStatus(
        current_replicas=current if current is not None else old.current_replicas,
        desired_replicas=desired,
        conditions=conditions,
        last_scale_time=now if scaled else old.last_scale_time,
        current_metrics=statuses if statuses is not None else old.current_metrics,
    )
    return SyncResult(
        hpa.key,
        current,
        desired,
        scaled,
        status,
        events,
        error,
        decision.reason,
        decision.metrics,
        decision.normalization,
        decision.tolerances,
    )


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

    def memory(self, key: str) -> HPAState | None:
        """The remembered state of an HPA, None before its first sync (nothing is created)."""
        return self._states.get(key)

    def pod_index(self, key: str, pods: Sequence[Pod]) -> PodIndex:
        """The classification of ``pods`` (the HPA's pod list), reused while the list object is."""
        return PodIndex.cached(self._pod_indexes, key, pods, self.config.initial_readiness_delay)

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
        """Decide, write the scale through the port, complete: one whole sync in one call.

        A convenience for callers that act at once on a port they own (the conformance runner,
        ``explain``, tests); the loop driver calls :meth:`decide` and :meth:`complete` itself.
        """
        decision = self.decide(hpa, now)
        return self.complete(decision, self.write(decision), now)

    def write(self, decision: HPADecision) -> RescaleOutcome | None:
        """Write the decided replicas through the scale-target port: the outcome ``complete`` needs
        (None when the decision wanted no rescale)."""
        if not decision.rescale:
            return None
        hpa = decision.hpa
        try:
            self.targets.update_scale(hpa.namespace, hpa.scale_target_ref, decision.desired_replicas)
        except ScaleError as exc:
            return RescaleOutcome(str(exc))
        return RESCALED

    def decide(self, hpa: HPA, now: float) -> HPADecision:
        """Everything ``reconcileAutoscaler`` does up to the scale write, writing nothing.

        Reads the scale and the metrics through the ports; neither the target nor this controller's
        memory is changed (the recommendations it would store travel in the decision).
        """
        memory = self._states.get(hpa.key)
        sync = _Sync(hpa, now, list(hpa.status.conditions), [], Remembered.of(memory))
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
            return sync.decision(
                None,
                hpa.status.desired_replicas,
                None,
                error=f"failed to query scale subresource for {ref.kind}/{hpa.namespace}/{ref.name}: {exc}",
            )
        sync.condition(
            _ABLE, True, "SucceededGetScale", "the HPA controller was able to get the target's current scale"
        )
        current = scale.spec_replicas
        min_replicas, max_replicas = hpa.min_replicas, hpa.max_replicas
        has_object_or_external = any(m.type in ("Object", "External") for m in hpa.metrics)
        if hpa.is_kubetide and min_replicas == 0 and not has_object_or_external:
            # The CRD cannot say this on a 1.20 API server (no validation rules): refuse, as the
            # built-in API server refuses such an autoscaling/v2 object.
            sync.event(True, EventReason.INVALID_MIN_REPLICAS, _INVALID_MIN_REPLICAS)
            sync.condition(_ACTIVE, False, ConditionReason.INVALID_MIN_REPLICAS, _INVALID_MIN_REPLICAS)
            return sync.decision(
                current, hpa.status.desired_replicas, (), error=_INVALID_MIN_REPLICAS, rescale=False
            )
        memory = memory or HPAState()
        # Work on a copy: the memory changes only when the caller completes the decision.
        state = HPAState(
            list(memory.recommendations)
            if memory.recommendations is not None
            else [Recommendation(current, now)],
            memory.scale_up_events,
            memory.scale_down_events,
        )

        scale_to_zero = self._scale_to_zero(hpa)
        zero_condition = hpa.status.condition(ConditionType.SCALED_TO_ZERO)
        scaled_to_zero = scale_to_zero and zero_condition is not None and zero_condition.status == "True"

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
                if not scale_to_zero:
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
        recommendations = state.recommendations
        if needs_metrics:
            combined = combine_metrics(
                sync,
                MetricInputs(
                    hpa,
                    scale.spec_replicas,
                    scale.status_replicas,
                    scale.selector,
                    self.metrics,
                    self.targets,
                    self.config,
                    now,
                    self._pod_indexes,
                ),
                self.selectors,
            )
            outcomes, statuses = combined.outcomes, combined.statuses
            if combined.abort:
                sync.event(True, EventReason.FAILED_COMPUTE_METRICS_REPLICAS, combined.error or "")
                ref = hpa.scale_target_ref
                return sync.decision(
                    current,
                    hpa.status.desired_replicas,
                    tuple(statuses),
                    error="failed to compute desired number of replicas based on listed metrics for "
                    f"{ref.kind}/{hpa.namespace}/{ref.name}: {combined.error}",
                    metrics=outcomes,
                    tolerances=(tolerances.down, tolerances.up),
                    recommendations=recommendations,
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
            recommendations = state.recommendations
            desired = normalization.desired
            if current == 0 and min_replicas != 0 and scaled_to_zero and desired < min_replicas:
                desired = min_replicas
                reason = reason or "Current number of replicas below Spec.MinReplicas"
            rescale = desired != current

        scale_event = None
        if rescale and hpa.behavior is not None:  # without behavior nothing reads the events
            scale_event = (
                ScaleEventChange("up", desired - current)
                if desired > current
                else ScaleEventChange("down", current - desired)
            )
        return sync.decision(
            current,
            desired if rescale else current,
            tuple(statuses),
            rescale=rescale,
            error=error,
            reason=reason,
            metrics=outcomes,
            normalization=normalization,
            tolerances=(tolerances.down, tolerances.up),
            recommendations=recommendations,
            scale_event=scale_event,
        )

    def complete(self, decision: HPADecision, outcome: RescaleOutcome | None, now: float) -> SyncResult:
        """The rest of ``reconcileAutoscaler`` once the caller has acted on ``decision``.

        ``outcome`` is the result of the scale write, or None when the decision wanted none. Commits
        the recommendations (whatever the outcome, as upstream stores them while normalizing) and, on
        a successful rescale, the scale event; sets AbleToScale and ScaledToZero and adds
        ``SuccessfulRescale`` or ``FailedRescale``. Complete each decision once, in the order decided.
        """
        if decision.rescale != (outcome is not None):
            raise ValueError(
                "complete() needs the rescale outcome exactly when the decision wanted a rescale"
            )
        hpa = decision.hpa
        if decision.recommendations is not None:
            self.state(hpa.key).recommendations = list(decision.recommendations)
        if outcome is None:  # the common case: nothing to add, so no copies
            return _result(
                decision,
                decision.conditions,
                decision.events,
                decision.desired_replicas,
                False,
                decision.error,
                now,
            )
        sync = _Sync(hpa, now, list(decision.conditions), list(decision.events), decision.remembered)
        desired = decision.desired_replicas
        if outcome.error is not None:
            sync.event(
                True,
                EventReason.FAILED_RESCALE,
                f"New size: {desired}; reason: {decision.reason}; error: {outcome.error}",
            )
            sync.condition(
                _ABLE,
                False,
                "FailedUpdateScale",
                f"the HPA controller was unable to update the target scale: {outcome.error}",
            )
            ref = hpa.scale_target_ref
            return sync.result(
                decision,
                hpa.status.desired_replicas,
                scaled=False,
                error=f"failed to rescale {ref.kind}/{hpa.namespace}/{ref.name}: {outcome.error}",
            )
        sync.condition(
            _ABLE,
            True,
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {desired}",
        )
        sync.event(False, EventReason.SUCCESSFUL_RESCALE, f"New size: {desired}; reason: {decision.reason}")
        if decision.scale_event is not None:
            self._store_scale_event(hpa, self.state(hpa.key), decision.scale_event, now)
        current = decision.current_replicas or 0
        if self._scale_to_zero(hpa):
            if (
                current > 0
                and desired == 0
                and hpa.min_replicas == 0
                and any(m.type in ("Object", "External") for m in hpa.metrics)
            ):
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
        return sync.result(decision, desired, scaled=True, error=decision.error)

    def failed(self, hpa: HPA, problem: str, now: float) -> SyncResult:
        """A sync that broke in a way upstream has no words for (an unexpected error in a port or in
        this code): ScalingActive False ``FailedReconcile`` and a Warning event, the rest unchanged."""
        sync = _Sync(hpa, now, list(hpa.status.conditions), [], Remembered.of(self._states.get(hpa.key)))
        sync.event(True, EventReason.FAILED_RECONCILE, problem)
        sync.condition(_ACTIVE, False, ConditionReason.FAILED_RECONCILE, f"the HPA sync failed: {problem}")
        decision = sync.decision(None, hpa.status.desired_replicas, None, error=problem)
        return sync.result(decision, decision.desired_replicas, scaled=False, error=problem)

    def _scale_to_zero(self, hpa: HPA) -> bool:
        """HPAScaleToZero for this HPA. A standard HPA: the gate. A kubetide HorizontalPodAutoscaler
        (whose minReplicas may be 0 whatever the gate): on when it uses scale to zero, that is
        minReplicas 0, or it was scaled to zero and has not been brought back yet; otherwise its status
        carries upstream's condition types only (no ScaledToZero), as ``kubectl describe hpa`` shows."""
        if not hpa.is_kubetide:
            return self.config.gates.hpa_scale_to_zero
        if hpa.min_replicas == 0:
            return True
        zero = hpa.status.condition(ConditionType.SCALED_TO_ZERO)
        return zero is not None and zero.status == "True"

    # --- bookkeeping -----------------------------------------------------------------------------

    @staticmethod
    def _store_scale_event(hpa: HPA, state: HPAState, change: ScaleEventChange, now: float) -> None:
        behavior = hpa.behavior
        if behavior is None or behavior.scale_up is None or behavior.scale_down is None:
            return  # without behavior nothing reads the events
        if change.direction == "up":
            store_scale_event(state.scale_up_events, behavior.scale_up, change.replica_change, now)
        else:
            store_scale_event(state.scale_down_events, behavior.scale_down, change.replica_change, now)
