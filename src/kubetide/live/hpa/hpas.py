"""The HPAs the live controller reconciles, read from the API server, and their status written back.

By default kubetide's own custom resource (``crd.py``), so it runs beside a managed control plane's
built-in HPA controller without a fight; with ``standard=True`` the standard objects instead, in
autoscaling/v2 or else v2beta2 (discovered: Kubernetes 1.20 serves v2beta2 only). Each listing:

- parses every object with ``HPA.from_manifest``; a malformed one becomes an :class:`HPAProblem` (its
  key, reference and message, for a Warning Event on it) and never stops the others;
- pairs a standard HPA and a kubetide HPA on the same workload as a :class:`HPAConflict`, so the
  driver warns on both (reason ``ConflictingHPA``: two controllers would fight over its replicas).
  The other kind is listed only for this; if it can't be listed the conflict check is skipped and
  said so in ``notes``, since it must not stop reconciling.

``write_status`` replaces the ``/status`` subresource with the resourceVersion last seen, re-reading
and retrying on a conflict (the status is the controller's own; nobody else writes it).
autoscaling/v2 and v2beta2 share the status shape (``currentMetrics`` with ``current`` values,
conditions, replicas, ``lastScaleTime``), so one status dict serves both versions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kubetide.hpa.driver import HPASourceError, StatusWriteError
from kubetide.live.hpa.api import ApiFailure, KubeApi
from kubetide.live.hpa.crd import CRD_API_VERSION, CRD_PLURAL
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA

__all__ = [
    "CONFLICT_REASON",
    "ApiHPAObjects",
    "HPAConflict",
    "HPAEntry",
    "HPAListing",
    "HPAProblem",
    "ObjectRef",
]

CONFLICT_REASON = "ConflictingHPA"
STANDARD_VERSIONS = ("v2", "v2beta2")  # in order of preference
CONFLICT_RETRIES = 3
PAGE = "500"


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Enough to emit an Event on an HPA object (involvedObject)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class HPAEntry:
    hpa: HPA
    ref: ObjectRef
    sync_period: float | None = None  # the CRD's spec.syncPeriod; None: the controller flag


@dataclass(frozen=True, slots=True)
class HPAProblem:
    """A malformed HPA object: reported on it, skipped this round."""

    ref: ObjectRef
    message: str


@dataclass(frozen=True, slots=True)
class HPAConflict:
    """A standard and a kubetide HPA scaling one workload."""

    kubetide: ObjectRef
    standard: ObjectRef
    target: str  # "Kind/name" in the HPAs' namespace

    @property
    def message(self) -> str:
        return (
            f"{self.target} is scaled by both the HorizontalPodAutoscaler {self.standard.key} "
            f"({self.standard.api_version}) and the kubetide HorizontalPodAutoscaler {self.kubetide.key}; "
            "they will fight over its replicas: delete one of them"
        )


@dataclass
class HPAListing:
    entries: list[HPAEntry] = field(default_factory=list)
    problems: list[HPAProblem] = field(default_factory=list)
    conflicts: list[HPAConflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class ApiHPAObjects:
    """Lists the HPA objects to reconcile (kubetide's CRD, or the standard ones) and writes their status.

    The HPA loop reads them through :class:`~kubetide.live.hpa.loop_source.LoopHPASource`. Errors are
    the loop's: :class:`HPASourceError` when nothing can be listed (the API failed, or serves no usable
    version), :class:`StatusWriteError` when a status is not written.
    """

    def __init__(self, api: KubeApi, *, standard: bool = False, namespace: str = "") -> None:
        self.api = api
        self.standard = standard
        self.namespace = namespace  # "" = every namespace
        self._standard_version: str | None = None
        self._seen: dict[str, dict[str, Any]] = {}  # the objects last listed, by key
        self._others: dict[str, ObjectRef] = {}  # the other kind's HPAs in a conflict, by key

    @property
    def api_version(self) -> str:
        return f"autoscaling/{self.standard_version()}" if self.standard else CRD_API_VERSION

    def standard_version(self) -> str:
        """autoscaling/v2 when served, else v2beta2 (discovered once)."""
        if self._standard_version is None:
            try:
                group = self.api.get("/apis/autoscaling")
            except ApiFailure as exc:
                raise HPASourceError(f"discovering the autoscaling API group: {exc}") from None
            served = {v.get("version") for v in group.get("versions") or [] if isinstance(v, dict)}
            version = next((v for v in STANDARD_VERSIONS if v in served), None)
            if version is None:
                raise HPASourceError(
                    f"the API server serves none of autoscaling/{', autoscaling/'.join(STANDARD_VERSIONS)} "
                    f"(it serves {', '.join(sorted(str(v) for v in served)) or 'nothing'})"
                )
            self._standard_version = version
        return self._standard_version

    def list_hpas(self) -> HPAListing:
        listing = HPAListing()
        own = self._list_items(self.api_version)
        for item in own:
            self._read(item, listing)
        self._seen = {_ref(item, self.api_version).key: item for item in own}
        self._find_conflicts(own, listing)
        return listing

    def uid(self, namespace: str, name: str) -> str | None:
        """The uid of an HPA of the last listing (for its Events' involvedObject), None if unknown."""
        item = self._seen.get(f"{namespace}/{name}")
        return None if item is None else (item.get("metadata") or {}).get("uid")

    def other_uid(self, namespace: str, name: str) -> str | None:
        """The uid of an HPA of the other kind found in a conflict of the last listing."""
        ref = self._others.get(f"{namespace}/{name}")
        return ref.uid if ref is not None and ref.uid else None

    def write_status(self, key: str, status: dict[str, Any]) -> None:
        """Replace the status of the HPA ``namespace/name``; StatusWriteError when it can't be written."""
        namespace, _, name = key.partition("/")
        try:
            api_version = self.api_version  # discovered by the listing before it
        except HPASourceError as exc:
            raise StatusWriteError(str(exc)) from None
        path = f"{self._collection(api_version, namespace)}/{name}"
        # The whole object goes back, as client-go's UpdateStatus sends it: the server keeps the spec
        # and checks the metadata, so nothing but the status changes.
        current = self._seen.get(key)
        for attempt in range(CONFLICT_RETRIES + 1):
            if current is None:
                current = self._get(path)
            try:
                self._seen[key] = self.api.put(f"{path}/status", {**current, "status": status})
                return
            except ApiFailure as exc:
                if exc.status != 409 or attempt == CONFLICT_RETRIES:
                    raise StatusWriteError(f"writing the status of {key}: {exc}") from None
            current = None

    # --- reading ------------------------------------------------------------------------------------

    def _read(self, item: dict[str, Any], listing: HPAListing) -> None:
        ref = _ref(item, self.api_version)
        try:
            hpa = HPA.from_manifest(item)
            listing.entries.append(HPAEntry(hpa, ref, hpa.sync_period))
        except ManifestError as exc:
            listing.problems.append(HPAProblem(ref, f"invalid HorizontalPodAutoscaler {ref.key}: {exc}"))

    def _find_conflicts(self, own: list[dict[str, Any]], listing: HPAListing) -> None:
        try:
            other_version = CRD_API_VERSION if self.standard else f"autoscaling/{self.standard_version()}"
            others = self._list_items(other_version, missing_ok=True)
        except HPASourceError as exc:
            listing.notes.append(f"conflicting HPAs not checked: {exc}")
            return
        targets: dict[tuple[str, str, str], list[ObjectRef]] = {}
        for item in others:
            ref = _ref(item, other_version)
            if (target := _target(item)) is not None:
                targets.setdefault((ref.namespace, *target), []).append(ref)
        self._others = {}
        for item in own:
            target = _target(item)
            ref = _ref(item, self.api_version)
            if target is None:
                continue
            for other in targets.get((ref.namespace, *target), []):
                self._others[other.key] = other
                kubetide, standard = (other, ref) if self.standard else (ref, other)
                listing.conflicts.append(HPAConflict(kubetide, standard, f"{target[0]}/{target[1]}"))

    def _list_items(self, api_version: str, *, missing_ok: bool = False) -> list[dict[str, Any]]:
        try:
            return list(self._pages(self._collection(api_version, self.namespace)))
        except ApiFailure as exc:
            if missing_ok and exc.status == 404:
                return []  # the CRD (or the group) is not installed: nothing to conflict with
            raise HPASourceError(f"listing {api_version} HorizontalPodAutoscalers: {exc}") from None

    def _pages(self, path: str) -> Iterator[dict[str, Any]]:
        params = {"limit": PAGE}
        while True:
            body = self.api.get(path, params)
            yield from (i for i in body.get("items") or [] if isinstance(i, dict))
            token = (body.get("metadata") or {}).get("continue")
            if not token:
                return
            params = {"limit": PAGE, "continue": token}

    def _get(self, path: str) -> dict[str, Any]:
        """The object at ``path`` as the API has it now, for a status write to go on from."""
        try:
            body = self.api.get(path)
            if not isinstance(body, dict):
                raise ApiFailure(0, "the response is not an object")
            return body
        except ApiFailure as exc:
            raise StatusWriteError(f"reading {path}: {exc}") from None

    @staticmethod
    def _collection(api_version: str, namespace: str) -> str:
        ns = f"/namespaces/{namespace}" if namespace else ""
        # The CRD keeps the standard plural, so one path shape serves both.
        return f"/apis/{api_version}{ns}/{CRD_PLURAL}"


def _ref(item: dict[str, Any], api_version: str) -> ObjectRef:
    raw = item.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return ObjectRef(
        api_version,
        "HorizontalPodAutoscaler",
        str(meta.get("namespace", "default")),
        str(meta.get("name", "")),
        str(meta.get("uid", "")),
        str(meta.get("resourceVersion", "")),
    )


def _target(item: dict[str, Any]) -> tuple[str, str] | None:
    spec = item.get("spec")
    ref = spec.get("scaleTargetRef") if isinstance(spec, dict) else None
    if not isinstance(ref, dict) or not ref.get("kind") or not ref.get("name"):
        return None
    return str(ref["kind"]), str(ref["name"])
