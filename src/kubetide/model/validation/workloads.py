"""Workloads as the API server validates them (``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``,
``ValidateReplicationController`` in ``pkg/apis/core/validation``): replicas and other counts, the
selector (required, not empty, matching the template's labels), the template's ``restartPolicy`` (only
``Always`` for what restarts its pods; ``OnFailure`` or ``Never`` for a Job), update strategies, and
the pod template itself.

Defaults are applied first, as the API server defaults before it validates: an omitted strategy is
``RollingUpdate`` with 25 % surge and unavailability, an omitted ``restartPolicy`` is ``Always``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetide.model.validation.checker import INT64, Checker
from kubetide.model.validation.meta import (
    selector_is_empty,
    selector_matches,
    validate_labels,
    validate_object_meta,
    validate_selector,
)
from kubetide.model.validation.names import label_value, percent
from kubetide.model.validation.pods import validate_pod_template

__all__ = [
    "int_or_percent",
    "validate_daemon_set",
    "validate_deployment",
    "validate_job",
    "validate_replica_set",
    "validate_replication_controller",
    "validate_stateful_set",
]


def _spec(ck: Checker, manifest: Mapping[str, Any], path: str) -> tuple[Mapping[str, Any], str]:
    validate_object_meta(ck, manifest.get("metadata"), f"{path}.metadata" if path else "metadata")
    where = f"{path}.spec" if path else "spec"
    return ck.mapping(manifest.get("spec"), where) or {}, where


def _template_for(
    ck: Checker, spec: Mapping[str, Any], path: str, kind: str, selector: Mapping[str, Any] | None
) -> Mapping[str, Any]:
    """The template, matched by ``selector``, restarting its pods (``Always``), without a deadline."""
    labels, pod_spec = validate_pod_template(ck, spec.get("template"), f"{path}.template")
    if selector is not None and not selector_is_empty(selector) and not selector_matches(selector, labels):
        ck.add(
            f"{path}.template.metadata.labels", "invalid value: `selector` does not match template `labels`"
        )
    restart = pod_spec.get("restartPolicy")
    if restart is not None and restart != "Always":
        ck.add(
            f"{path}.template.spec.restartPolicy",
            f'unsupported value {restart!r}: supported values: "Always" (a {kind} restarts its pods)',
        )
    if pod_spec.get("activeDeadlineSeconds") is not None:
        ck.add(
            f"{path}.template.spec.activeDeadlineSeconds",
            f"forbidden: activeDeadlineSeconds in {kind} is not Supported",
        )
    return pod_spec


def _required_selector(
    ck: Checker, spec: Mapping[str, Any], path: str, kind: str
) -> Mapping[str, Any] | None:
    if spec.get("selector") is None:
        ck.add(f"{path}.selector", "is required")
        return None
    selector = validate_selector(ck, spec.get("selector"), f"{path}.selector")
    if selector is not None and selector_is_empty(selector):
        ck.add(f"{path}.selector", f"invalid value: empty selector is invalid for {kind.lower()}")
    return selector


def int_or_percent(ck: Checker, value: Any, path: str, *, at_most_100: bool = True) -> int | None:
    """``ValidatePositiveIntOrPercent`` (and ``IsNotMoreThan100Percent`` with ``at_most_100``); returns
    the number (a percentage's number) for the "both zero" checks, None when absent or invalid."""
    if value is None:
        return None
    if isinstance(value, str):
        errs = percent(value)
        if errs:
            ck.invalid(path, value, errs)
            return None
        share = int(value[:-1])
        if at_most_100 and share > 100:
            ck.add(path, f"invalid value {value!r}: must not be greater than 100%")
        return share
    return ck.nonnegative(value, path)


def _rolling_update(
    ck: Checker, spec: Mapping[str, Any], where: str, key: str, types: tuple[str, str], refused: str
) -> tuple[Mapping[str, Any] | None, str]:
    """The strategy's ``type`` (one of ``types``) and its ``rollingUpdate``, which the second type
    (Recreate, OnDelete) does not take (``refused`` says so). Returns it when it applies, and its path."""
    strategy = ck.mapping(spec.get(key), f"{where}.{key}") or {}
    kind = ck.enum(strategy.get("type"), f"{where}.{key}.type", types)
    path = f"{where}.{key}.rollingUpdate"
    rolling = ck.mapping(strategy.get("rollingUpdate"), path)
    if kind == types[1] and rolling is not None:
        ck.add(path, refused)
        return None, path
    return rolling, path


def _update_strategy(
    ck: Checker, spec: Mapping[str, Any], where: str
) -> tuple[Mapping[str, Any] | None, str]:
    """A StatefulSet's or DaemonSet's ``updateStrategy`` (RollingUpdate or OnDelete)."""
    return _rolling_update(
        ck,
        spec,
        where,
        "updateStrategy",
        ("RollingUpdate", "OnDelete"),
        "invalid value: only allowed for updateStrategy 'RollingUpdate'",
    )


def _surge_and_unavailable(
    ck: Checker, rolling: Mapping[str, Any], path: str, surge_default: int, message: str
) -> None:
    """``maxUnavailable`` (at most 100%) and ``maxSurge`` (``surge_default`` when omitted: 25% for a
    Deployment, 0 for a DaemonSet), not both 0."""
    unavailable = int_or_percent(ck, rolling.get("maxUnavailable"), f"{path}.maxUnavailable")
    surge = int_or_percent(ck, rolling.get("maxSurge"), f"{path}.maxSurge", at_most_100=False)
    if unavailable == 0 and (surge if surge is not None else surge_default) == 0:
        ck.add(f"{path}.maxUnavailable", f"invalid value 0: {message}")


def validate_deployment(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    spec, where = _spec(ck, manifest, path)
    ck.nonnegative(spec.get("replicas"), f"{where}.replicas")
    selector = _required_selector(ck, spec, where, "Deployment")
    _template_for(ck, spec, where, "Deployment", selector)
    rolling, ru = _rolling_update(
        ck,
        spec,
        where,
        "strategy",
        ("RollingUpdate", "Recreate"),
        "forbidden: may not be specified when strategy `type` is 'Recreate'",
    )
    if rolling is not None:
        _surge_and_unavailable(ck, rolling, ru, 25, "may not be 0 when `maxSurge` is 0")
    ready = ck.nonnegative(spec.get("minReadySeconds"), f"{where}.minReadySeconds")
    ck.nonnegative(spec.get("revisionHistoryLimit"), f"{where}.revisionHistoryLimit")
    deadline = ck.nonnegative(spec.get("progressDeadlineSeconds"), f"{where}.progressDeadlineSeconds")
    if deadline is not None and deadline <= (ready or 0):
        ck.add(
            f"{where}.progressDeadlineSeconds",
            f"invalid value {deadline}: must be greater than minReadySeconds",
        )


def validate_replica_set(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    spec, where = _spec(ck, manifest, path)
    ck.nonnegative(spec.get("replicas"), f"{where}.replicas")
    ck.nonnegative(spec.get("minReadySeconds"), f"{where}.minReadySeconds")
    selector = _required_selector(ck, spec, where, "Deployment")  # upstream's wording for a ReplicaSet too
    _template_for(ck, spec, where, "ReplicaSet", selector)


def validate_stateful_set(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    spec, where = _spec(ck, manifest, path)
    ck.enum(spec.get("podManagementPolicy"), f"{where}.podManagementPolicy", ("OrderedReady", "Parallel"))
    rolling, ru = _update_strategy(ck, spec, where)
    if rolling is not None:
        ck.nonnegative(rolling.get("partition"), f"{ru}.partition")
        int_or_percent(ck, rolling.get("maxUnavailable"), f"{ru}.maxUnavailable")
    ck.nonnegative(spec.get("replicas"), f"{where}.replicas")
    ck.nonnegative(spec.get("minReadySeconds"), f"{where}.minReadySeconds")
    selector = _required_selector(ck, spec, where, "StatefulSet")
    _template_for(ck, spec, where, "StatefulSet", selector)


def validate_daemon_set(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    spec, where = _spec(ck, manifest, path)
    selector = _required_selector(ck, spec, where, "DaemonSet")
    _template_for(ck, spec, where, "DaemonSet", selector)
    ck.nonnegative(spec.get("minReadySeconds"), f"{where}.minReadySeconds")
    ck.nonnegative(spec.get("revisionHistoryLimit"), f"{where}.revisionHistoryLimit")
    rolling, ru = _update_strategy(ck, spec, where)
    if rolling is not None:
        _surge_and_unavailable(ck, rolling, ru, 0, "cannot be 0 when maxSurge is 0")


def validate_job(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    spec, where = _spec(ck, manifest, path)
    meta = manifest.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if isinstance(name, str) and name:
        # The job controller labels its pods job-name=<name>: the name must be a valid label value.
        for message in label_value(name):
            ck.add(
                f"{path}.metadata.name" if path else "metadata.name",
                f"invalid value {name!r}: {message} (it labels the Job's pods)",
            )
    for key in ("parallelism", "completions", "backoffLimit"):
        ck.nonnegative(spec.get(key), f"{where}.{key}")
    ck.nonnegative(spec.get("activeDeadlineSeconds"), f"{where}.activeDeadlineSeconds", INT64)
    ck.nonnegative(spec.get("ttlSecondsAfterFinished"), f"{where}.ttlSecondsAfterFinished")
    ck.enum(spec.get("completionMode"), f"{where}.completionMode", ("NonIndexed", "Indexed"))
    manual = spec.get("manualSelector") is True
    selector = validate_selector(ck, spec.get("selector"), f"{where}.selector")
    if manual and spec.get("selector") is None:
        ck.add(f"{where}.selector", "is required")
    elif not manual and selector is not None and not selector_matches(selector, _generated_labels(manifest)):
        # ValidateGeneratedSelector: the API server selects the Job's pods by its uid and name (as an
        # exported Job shows); a selector of the user's needs spec.manualSelector.
        ck.add(
            f"{where}.selector",
            "invalid value: `selector` not auto-generated (set spec.manualSelector: true to give your own)",
        )
    labels, pod_spec = validate_pod_template(ck, spec.get("template"), f"{where}.template")
    if manual and selector is not None and not selector_matches(selector, labels):
        ck.add(
            f"{where}.template.metadata.labels", "invalid value: `selector` does not match template `labels`"
        )
    if pod_spec.get("restartPolicy") in (None, "Always"):  # defaulted to Always, refused for a Job
        ck.add(f"{where}.template.spec.restartPolicy", 'is required: valid values: "OnFailure", "Never"')


def _generated_labels(manifest: Mapping[str, Any]) -> dict[str, str]:
    meta = manifest.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    return {
        "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid,
        "job-name": name,
        "batch.kubernetes.io/job-name": name,
    }


def validate_replication_controller(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    spec, where = _spec(ck, manifest, path)
    ck.nonnegative(spec.get("replicas"), f"{where}.replicas")
    ck.nonnegative(spec.get("minReadySeconds"), f"{where}.minReadySeconds")
    selector = validate_labels(ck, spec.get("selector"), f"{where}.selector")
    template = spec.get("template")
    template_meta = template.get("metadata") if isinstance(template, Mapping) else None
    template_labels = template_meta.get("labels") if isinstance(template_meta, Mapping) else None
    if not selector and not template_labels:
        ck.add(f"{where}.selector", "is required")  # defaulted from the template's labels when omitted
    _template_for(ck, spec, where, "ReplicationController", {"matchLabels": selector} if selector else None)
