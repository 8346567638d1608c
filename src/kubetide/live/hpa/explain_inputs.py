"""What ``kubetide hpa explain`` reads when it explains a real HPA: from files a user printed with
kubectl (:func:`from_recorded`), or straight from a cluster (:func:`from_cluster`).

Either way the metrics and the scale are read through live mode's ports over an API (recorded, or the
real server), so the explanation parses exactly what the controller would; the scale is never written
(:class:`ReadOnlyTargets`). The controller's memory (recommendations, scale events) is not in the HPA
object: ``--state`` gives it; else kubetide's live controller publishes it, in its memory ConfigMap
(:func:`memory_from_configmap`, also among ``-f``'s objects: :func:`memory_from_objects`) and on its
``/debug/hpa`` (:func:`memory_from_controller`); without it the explanation is that of a controller
that just started, and says so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx2

from kubetide.hpa.memory import read_document, rfc3339
from kubetide.hpa.ports import MetricsSource, Scale, ScaleTargetPort
from kubetide.hpa.state import HPAState
from kubetide.kube.rest import Rest
from kubetide.live.hpa.api import ApiFailure, KubeApi
from kubetide.live.hpa.memory_configmap import (
    MemoryConfigMap,
    MemoryStoreError,
    StoredMemory,
    data_key,
    parse,
)
from kubetide.live.hpa.metrics_api import ApiMetricsSource
from kubetide.live.hpa.prometheus.client import PrometheusClient
from kubetide.live.hpa.prometheus.source import PrometheusMetricsSource
from kubetide.live.hpa.recorded import RecordedCluster, RecordedPods
from kubetide.live.hpa.scale import ApiScaleTargets
from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.hpa import HPA, CrossVersionObjectReference
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector
from kubetide.model.validation import read_validated, validate_object

__all__ = [
    "ControllerUnreachable",
    "ExplainInputs",
    "FoundMemory",
    "ReadOnlyTargets",
    "from_cluster",
    "from_recorded",
    "memory_from_configmap",
    "memory_from_controller",
    "memory_from_objects",
]

# Where an HPA named on the command line is looked for, in this order.
HPA_PATHS = (
    "/apis/autoscaling.kubetide.io/v1",
    "/apis/autoscaling/v2",
    "/apis/autoscaling/v2beta2",
)


@dataclass(frozen=True)
class ExplainInputs:
    hpa: HPA
    metrics: MetricsSource
    targets: ScaleTargetPort
    now: float
    now_source: str  # how ``now`` was chosen, for the reader


class ReadOnlyTargets:
    """A scale-target port whose writes go nowhere: explaining never changes the cluster."""

    def __init__(self, inner: ScaleTargetPort) -> None:
        self.inner = inner

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        return self.inner.get_scale(namespace, ref)

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        return None

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self.inner.list_pods(namespace, selector)


def _ports(api: KubeApi, pods: Sequence[Pod]) -> tuple[MetricsSource, ScaleTargetPort]:
    return ApiMetricsSource(api), ReadOnlyTargets(ApiScaleTargets(api, RecordedPods(pods)))


def _pods(
    manifests: Sequence[tuple[str, Any]], *, validate: bool = False
) -> tuple[list[Pod], list[FieldError]]:
    """The pods' views; ``validate``: also the API server's rules (files; a live server did them)."""
    pods, problems = [], []
    for path, manifest in manifests:
        try:
            if validate:
                pods.append(read_validated(manifest, path, Pod.from_manifest))
            else:
                pods.append(Pod.from_manifest(manifest, path))
        except ManifestError as exc:
            problems += exc.errors
    return pods, problems


def from_recorded(
    objects: Sequence[tuple[str, dict[str, Any]]], hpa_name: str | None, now: float | None
) -> ExplainInputs:
    """``objects``: (where it came from, object). ``hpa_name``: ``[namespace/]name`` when several HPAs
    were given. ``now``: the moment to explain; default the newest metric sample's timestamp."""
    problems: list[FieldError] = []
    hpas: list[HPA] = []
    for path, obj in objects:
        if obj.get("kind") == "HorizontalPodAutoscaler":
            try:
                hpas.append(read_validated(obj, path, HPA.from_manifest))
            except ManifestError as exc:
                problems += exc.errors
        elif obj.get("kind") != "Pod":
            problems += validate_object(obj, path)  # the scale targets (Deployments, ...)
    pods, pod_problems = _pods([(p, o) for p, o in objects if o.get("kind") == "Pod"], validate=True)
    problems += pod_problems
    hpa = _choose(hpas, hpa_name, problems)
    if problems or hpa is None:
        raise ManifestError(problems)
    cluster = RecordedCluster([o for _, o in objects])
    api = KubeApi(httpx2.Client(transport=httpx2.MockTransport(cluster.handle), base_url="http://recorded"))
    metrics, targets = _ports(api, pods)
    if now is not None:
        return ExplainInputs(hpa, metrics, targets, now, "--now")
    newest = cluster.newest_sample()
    if newest is not None:
        return ExplainInputs(hpa, metrics, targets, newest, "the newest metric sample (--now to change)")
    return ExplainInputs(hpa, metrics, targets, time.time(), "the current time (no metric sample given)")


def _choose(hpas: list[HPA], name: str | None, problems: list[FieldError]) -> HPA | None:
    if name is not None:
        namespace, _, short = name.rpartition("/")
        found = [h for h in hpas if h.name == short and (not namespace or h.namespace == namespace)]
        if len(found) == 1:
            return found[0]
        listed = ", ".join(h.key for h in hpas) or "none"
        problems.append(FieldError("--hpa", f"{name!r} matches {len(found)} of the HPAs given ({listed})"))
        return None
    if len(hpas) == 1:
        return hpas[0]
    if not hpas:
        problems.append(FieldError("-f", "no HorizontalPodAutoscaler among the objects given"))
    else:
        listed = ", ".join(h.key for h in hpas)
        problems.append(FieldError("--hpa", f"{len(hpas)} HPAs given ({listed}): name the one to explain"))
    return None


def from_cluster(
    rest: Rest,
    namespace: str,
    name: str,
    now: float | None = None,
    prometheus_url: str = "",
    rate_window: float = 60.0,
) -> ExplainInputs:
    """The HPA, its pods, scale and metrics as the cluster serves them now (the metrics from Prometheus
    with ``prometheus_url``, as ``kubetide run hpa --prometheus-url``). Raises ApiFailure when the HPA
    cannot be read, ManifestError when it (or a pod) does not parse."""
    api = KubeApi(rest)
    manifest: Any = None
    failure: ApiFailure | None = None
    for prefix in HPA_PATHS:
        try:
            manifest = api.get(f"{prefix}/namespaces/{namespace}/horizontalpodautoscalers/{name}")
            break
        except ApiFailure as exc:
            failure = exc if failure is None or failure.status == 404 else failure
            if exc.status not in (403, 404):
                raise
    if manifest is None:
        assert failure is not None
        raise failure
    hpa = HPA.from_manifest(manifest, "hpa")
    listing = api.get(f"/api/v1/namespaces/{namespace}/pods")
    items = listing.get("items") if isinstance(listing, dict) else None
    pods, problems = _pods([(f"pods[{i}]", p) for i, p in enumerate(items or [])])
    if problems:
        raise ManifestError(problems)
    metrics, targets = _ports(api, pods)
    if prometheus_url:
        metrics = PrometheusMetricsSource(
            PrometheusClient(prometheus_url), targets.list_pods, window_s=rate_window
        )
    if now is not None:
        return ExplainInputs(hpa, metrics, targets, now, "--now")
    return ExplainInputs(hpa, metrics, targets, time.time(), "the current time")


@dataclass(frozen=True)
class FoundMemory:
    """The controller's memory of one HPA and where it came from, for the reader (``found`` False: a
    controller that just started, and ``source`` says why)."""

    state: HPAState
    source: str
    found: bool = True
    written_at: float | None = None


def _none(why: str) -> FoundMemory:
    return FoundMemory(HPAState(), f"none ({why}): explained as a controller that just started", False)


def memory_from_stored(stored: StoredMemory | None, where: str, hpa: HPA) -> FoundMemory:
    """``hpa``'s memory in a stored ConfigMap's (None: there is no such ConfigMap)."""
    if stored is None:
        return _none(f"{where} not found")
    entry = stored.memories.get(hpa.key)
    if entry is None:
        broken = [p for p in stored.problems if f"data[{data_key(hpa.key)}]" in p]
        why = f"{where} has no memory of {hpa.key}" + (f": {'; '.join(broken)}" if broken else "")
        return _none(why)
    uid, state = entry
    if uid and hpa.uid and uid != hpa.uid:
        return _none(f"{where} remembers another HPA of that name (uid {uid}; this one is {hpa.uid})")
    written = stored.written_at
    return FoundMemory(
        state, where + (f", written {rfc3339(written)}" if written is not None else ""), True, written
    )


def memory_from_configmap(rest: Rest, namespace: str, name: str, hpa: HPA) -> FoundMemory:
    """``hpa``'s memory as the live controller keeps it (reads only)."""
    store = MemoryConfigMap(rest, namespace, name, attempts=2)
    try:
        stored = store.read()
    except MemoryStoreError as exc:
        return _none(str(exc))
    return memory_from_stored(stored, store.where, hpa)


def memory_from_objects(objects: Sequence[tuple[str, Any]], name: str, hpa: HPA) -> FoundMemory:
    """``hpa``'s memory in the ConfigMap called ``name`` among ``-f``'s objects (``kubectl get
    configmap -n kubetide kubetide-hpa-memory -o yaml``)."""
    for path, obj in objects:
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if obj.get("kind") == "ConfigMap" and isinstance(meta, dict) and meta.get("name") == name:
            return memory_from_stored(
                parse(obj, f"{path} (ConfigMap {name})"), f"{path} (ConfigMap {name})", hpa
            )
    return _none(f"neither --state nor the ConfigMap {name} among the files")


class ControllerUnreachable(Exception):
    """``--controller-address`` did not answer as the controller's ``/debug/hpa`` does."""


def memory_from_controller(url: str, hpa: HPA, client: httpx2.Client | None = None) -> FoundMemory:
    """``hpa``'s memory as the running controller holds it now, from its ``/debug/hpa``."""
    where = f"{url.rstrip('/')}/debug/hpa"
    own = client is None
    http = client or httpx2.Client(timeout=10.0)
    try:
        answer = http.get(where, params={"hpa": hpa.key})
        body = answer.json()
    except (httpx2.HTTPError, ValueError) as exc:
        raise ControllerUnreachable(f"--controller-address: {where}: {exc}") from None
    finally:
        if own:
            http.close()
    if answer.status_code == 404:
        return _none(f"the controller at {url} has no HPA {hpa.key}")
    if answer.status_code != 200 or not isinstance(body, dict) or "memory" not in body:
        raise ControllerUnreachable(
            f"--controller-address: {where}: HTTP {answer.status_code}, not /debug/hpa's answer"
        )
    if body["memory"] is None:
        return _none(f"the controller at {url} remembers nothing of {hpa.key}")
    try:
        uid, state = read_document(body["memory"], f"{where} memory")
    except ManifestError as exc:
        raise ControllerUnreachable(f"--controller-address: {exc}") from None
    if uid and hpa.uid and uid != hpa.uid:
        return _none(f"the controller at {url} remembers another HPA of that name (uid {uid})")
    return FoundMemory(state, f"the controller at {url} (/debug/hpa)")
