"""An API server in the test's process that keeps objects and answers watches, over HTTP on a loopback
port: the live caches (informers), the live ports and the live HPA run against it unchanged.

:class:`ObjectApi` keeps JSON objects by resource, namespace and name with one resourceVersion counter,
as etcd does, and a history of every change: LIST (with field and label selectors, in the order the
objects were created), WATCH from a resourceVersion (the history replayed, then each change as it
comes, BOOKMARKs when asked; an object that stops matching a watch's field selector is DELETED for that
watch, as the API server does), GET, POST, PUT (a stale resourceVersion is a 409 Conflict), PATCH (a
JSON merge patch; strategic merge patches are taken as merge patches) and DELETE. Discovery answers
for the groups of its resources. :meth:`ObjectApi.mirror` makes a resource's objects those given, with
the watch events that takes: a world kept elsewhere (the simulator's) is shown through it.

:class:`LoopbackApiServer` serves an ``ObjectApi`` (or a subclass that answers some requests itself)
on ``127.0.0.1`` on a free port; :meth:`LoopbackApiServer.rest` is a client for it.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2

from kubetide.kube.discovery import ResourceKind
from kubetide.kube.rest import Rest
from kubetide.model.selectors import parse_selector_string

__all__ = ["LoopbackApiServer", "ObjectApi", "Reply", "Target", "merge_patch", "status_body"]

Json = dict[str, Any]
Reply = tuple[int, Any]  # (HTTP status, JSON body)
Write = Callable[[bytes], None]


def status_body(code: int, reason: str, message: str = "") -> Json:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "code": code,
        "message": message,
    }


@dataclass(frozen=True, slots=True)
class Target:
    """What a request's path names."""

    resource: ResourceKind
    namespace: str | None  # None: cluster-scoped, or every namespace
    name: str | None
    sub: str | None  # a subresource (status, scale, eviction)


@dataclass(frozen=True, slots=True)
class _Change:
    rv: int
    plural: str | None  # None: a BOOKMARK for every watch
    type: str
    obj: Json


class _Selector:
    """A watch or list's field and label selectors."""

    def __init__(self, params: Mapping[str, str]) -> None:
        self.fields: list[tuple[list[str], bool, str]] = []
        for term in filter(None, params.get("fieldSelector", "").split(",")):
            negated = "!=" in term
            path, _, value = term.partition("!=" if negated else "=")
            self.fields.append((path.lstrip("=").split("."), negated, value.lstrip("=")))
        labels = params.get("labelSelector", "")
        self.labels = parse_selector_string(labels) if labels else None

    def matches(self, obj: Json) -> bool:
        for path, negated, value in self.fields:
            node: Any = obj
            for part in path:
                node = node.get(part) if isinstance(node, dict) else None
            if (str(node if node is not None else "") == value) == negated:
                return False
        if self.labels is not None:
            labels = (obj.get("metadata") or {}).get("labels") or {}
            return self.labels.matches(labels)
        return True


def _key(obj: Json) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta["name"])


def _without_version(obj: Json) -> Json:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "resourceVersion"}
    return {**obj, "metadata": meta}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: a null deletes a key, objects merge, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


class ObjectApi:
    """The objects of ``resources``; thread-safe (requests come on the server's threads)."""

    def __init__(self, resources: Iterable[ResourceKind]) -> None:
        self.resources = {r.plural: r for r in resources}
        self._objects: dict[str, dict[tuple[str, str], Json]] = {plural: {} for plural in self.resources}
        self._rv = 0
        self._uids = 0
        self._history: list[_Change] = []
        self._cond = threading.Condition()
        self._closed = False
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, in order

    # --- the objects --------------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        return self._rv

    def get(self, plural: str, namespace: str | None, name: str) -> Json | None:
        with self._cond:
            obj = self._objects[plural].get((namespace or "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def list(self, plural: str, namespace: str | None = None) -> list[Json]:
        with self._cond:
            return [
                copy.deepcopy(o)
                for (ns, _), o in self._objects[plural].items()
                if namespace is None or ns == namespace
            ]

    def put(self, plural: str, obj: Json) -> Json:
        """Create or replace ``obj`` (a new resourceVersion; a uid when it has none); the stored copy."""
        with self._cond:
            return copy.deepcopy(self._put(plural, copy.deepcopy(obj)))

    def delete(self, plural: str, namespace: str | None, name: str) -> Json | None:
        with self._cond:
            return self._delete(plural, (namespace or "", name))

    def mirror(self, plural: str, objects: Iterable[Json]) -> None:
        """Make ``plural``'s objects exactly ``objects`` (in their order for the new ones): the ones
        gone are DELETED, an object whose uid changed is DELETED and ADDED again (a new object of the
        same name), a changed one MODIFIED, an unchanged one left alone."""
        resource = self.resources[plural]
        defaults = {"apiVersion": resource.api_version, "kind": resource.kind}
        wanted = {_key(o): {**defaults, **o} for o in objects}
        with self._cond:
            stored = self._objects[plural]
            for key in [k for k, o in stored.items() if k not in wanted or _uid(o) != _uid(wanted[k])]:
                self._delete(plural, key)
            for key, obj in wanted.items():
                current = stored.get(key)
                if current is None or _without_version(current) != _without_version(obj):
                    self._put(plural, copy.deepcopy(obj))

    def bookmark(self) -> int:
        """A BOOKMARK at the current resourceVersion on every open watch; that version."""
        with self._cond:
            self._history.append(_Change(self._rv, None, "BOOKMARK", {}))
            self._cond.notify_all()
            return self._rv

    def close(self) -> None:
        """End every watch."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _put(self, plural: str, obj: Json) -> Json:
        meta = obj.setdefault("metadata", {})
        if not meta.get("uid"):
            self._uids += 1
            meta["uid"] = f"api-uid-{self._uids}"
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        resource = self.resources[plural]
        obj.setdefault("apiVersion", resource.api_version)
        obj.setdefault("kind", resource.kind)
        key = _key(obj)
        stored = self._objects[plural]
        change = "MODIFIED" if key in stored else "ADDED"
        stored[key] = obj
        self._history.append(_Change(self._rv, plural, change, obj))
        self._cond.notify_all()
        return obj

    def _delete(self, plural: str, key: tuple[str, str]) -> Json | None:
        obj = self._objects[plural].pop(key, None)
        if obj is None:
            return None
        self._rv += 1
        gone = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self._rv)}}
        self._history.append(_Change(self._rv, plural, "DELETED", gone))
        self._cond.notify_all()
        return copy.deepcopy(gone)

    # --- requests -----------------------------------------------------------------------------------

    def target(self, path: str) -> Target | None:
        """The resource, namespace, name and subresource ``path`` names; None for another path."""
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest:
            return None
        resource = self.resources.get(rest[0])
        if resource is None or (resource.group, resource.version) != (group, version):
            return None
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        return Target(resource, namespace, name, sub)

    def record(self, method: str, path: str) -> None:
        with self._cond:
            self.requests.append((method, path))

    def handle(self, method: str, path: str, params: Mapping[str, str], body: Any) -> Reply:
        """One request that is not a watch."""
        discovery = self._discovery(path)
        if discovery is not None:
            return 200, discovery
        target = self.target(path)
        if target is None:
            return 404, status_body(
                404, "NotFound", f"the server could not find the requested resource ({path})"
            )
        if target.sub is not None:
            return 404, status_body(
                404, "NotFound", f"no subresource {target.sub} of {target.resource.plural}"
            )
        if target.name is None:
            if method == "GET":
                return 200, self.list_body(target.resource, target.namespace, params)
            if method == "POST":
                return self._create(target, body)
            return 405, status_body(405, "MethodNotAllowed", method)
        return self.handle_object(method, target, body)

    def handle_object(self, method: str, target: Target, body: Any) -> Reply:
        plural, name = target.resource.plural, str(target.name)
        current = self.get(plural, target.namespace, name)
        if current is None:
            return 404, status_body(404, "NotFound", f'{plural} "{name}" not found')
        if method == "GET":
            return 200, current
        if method == "DELETE":
            return 200, self.delete(plural, target.namespace, name)
        if method == "PUT":
            sent = str((body.get("metadata") or {}).get("resourceVersion", ""))
            if sent and sent != current["metadata"]["resourceVersion"]:
                message = f'Operation cannot be fulfilled on {plural} "{name}": the object has been modified'
                return 409, status_body(409, "Conflict", message)
            return 200, self.put(plural, body)
        if method == "PATCH":
            return 200, self.put(plural, merge_patch(current, body))
        return 405, status_body(405, "MethodNotAllowed", method)

    def _create(self, target: Target, body: Any) -> Reply:
        meta = body.setdefault("metadata", {})
        if target.namespace is not None:
            meta["namespace"] = target.namespace
        if not meta.get("name") and meta.get("generateName"):
            with self._cond:
                meta["name"] = f"{meta['generateName']}{self._rv + 1:05d}"
        if self.get(target.resource.plural, target.namespace, str(meta.get("name"))) is not None:
            return 409, status_body(
                409, "AlreadyExists", f'{target.resource.plural} "{meta["name"]}" already exists'
            )
        return 201, self.put(target.resource.plural, body)

    def list_body(self, resource: ResourceKind, namespace: str | None, params: Mapping[str, str]) -> Json:
        selector = _Selector(params)
        with self._cond:
            items = [
                copy.deepcopy(o)
                for (ns, _), o in self._objects[resource.plural].items()
                if (namespace is None or ns == namespace) and selector.matches(o)
            ]
            rv = self._rv
        return {
            "apiVersion": resource.api_version,
            "kind": f"{resource.kind}List",
            "metadata": {"resourceVersion": str(rv)},
            "items": items,
        }

    def watch(self, path: str, params: Mapping[str, str], write: Write) -> None:
        """Stream the watch ``path`` names from ``params["resourceVersion"]`` until the API closes."""
        target = self.target(path)
        if target is None or target.name is not None:
            return
        plural, namespace, selector = target.resource.plural, target.namespace, _Selector(params)
        since = int(params.get("resourceVersion") or 0)
        with self._cond:
            cursor = next((i for i, c in enumerate(self._history) if c.rv > since), len(self._history))
            # What the watcher holds: the objects matching its selector at ``since`` (the list it made).
            at_since: dict[tuple[str, str], Json] = {}
            for change in self._history[:cursor]:
                if change.plural == plural:
                    if change.type == "DELETED":
                        at_since.pop(_key(change.obj), None)
                    else:
                        at_since[_key(change.obj)] = change.obj
            shown = {k for k, o in at_since.items() if selector.matches(o)}
        while True:
            with self._cond:
                while cursor >= len(self._history) and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                changes, cursor = self._history[cursor:], len(self._history)
            for change in changes:
                event = self._event(change, plural, namespace, selector, shown)
                if event is not None:
                    write(json.dumps(event).encode() + b"\n")

    def _event(
        self,
        change: _Change,
        plural: str,
        namespace: str | None,
        selector: _Selector,
        shown: set[tuple[str, str]],
    ) -> Json | None:
        if change.plural is None:
            resource = self.resources[plural]
            bookmark = {"kind": resource.kind, "apiVersion": resource.api_version}
            return {
                "type": "BOOKMARK",
                "object": {**bookmark, "metadata": {"resourceVersion": str(change.rv)}},
            }
        if change.plural != plural:
            return None
        key = _key(change.obj)
        if namespace is not None and key[0] != namespace:
            return None
        if change.type == "DELETED":
            if key not in shown:
                return None
            shown.discard(key)
            return {"type": "DELETED", "object": change.obj}
        if selector.matches(change.obj):
            kind = "MODIFIED" if key in shown else "ADDED"
            shown.add(key)
            return {"type": kind, "object": change.obj}
        if key in shown:  # it no longer matches: gone for this watch
            shown.discard(key)
            return {"type": "DELETED", "object": change.obj}
        return None

    def _discovery(self, path: str) -> Json | None:
        groups: dict[str, list[str]] = {}
        for r in self.resources.values():
            versions = groups.setdefault(r.group, [])
            if r.version not in versions:
                versions.append(r.version)
        clean = path.rstrip("/")
        if clean == "/api":
            return {"kind": "APIVersions", "versions": ["v1"]}
        if clean == "/apis":
            return {
                "kind": "APIGroupList",
                "groups": [_group(name, versions) for name, versions in groups.items() if name],
            }
        parts = clean.strip("/").split("/")
        if parts[0] == "apis" and len(parts) == 2 and parts[1] in groups:
            return _group(parts[1], groups[parts[1]])
        if (parts[0] == "apis" and len(parts) == 3) or parts == ["api", "v1"]:
            group, version = (parts[1], parts[2]) if parts[0] == "apis" else ("", "v1")
            listed = [r for r in self.resources.values() if (r.group, r.version) == (group, version)]
            if not listed:
                return None
            resources = [{"name": r.plural, "kind": r.kind, "namespaced": r.namespaced} for r in listed]
            return {
                "kind": "APIResourceList",
                "groupVersion": listed[0].api_version,
                "resources": resources,
            }
        return None


def _uid(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("uid", ""))


def _group(name: str, versions: list[str]) -> Json:
    listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": listed, "preferredVersion": listed[0]}


class LoopbackApiServer:
    """``api`` served over HTTP on 127.0.0.1 (a free port), each connection on its own thread."""

    def __init__(self, api: ObjectApi) -> None:
        self.api = api
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="object-api", daemon=True)
        self._clients: list[httpx2.Client] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> LoopbackApiServer:
        self._thread.start()
        return self

    def rest(self) -> Rest:
        client = httpx2.Client(base_url=self.url, timeout=30.0)
        self._clients.append(client)
        return Rest(client)

    def stop(self) -> None:
        self.api.close()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10.0)
        for client in self._clients:
            client.close()


def _handler(api: ObjectApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # small writes (a watch event, a reply) go at once

        def _request(self) -> None:
            url = urlsplit(self.path)
            params = dict(parse_qsl(url.query))
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            api.record(self.command, url.path)
            if params.get("watch") == "true":
                self._watch(url.path, params)
                return
            body = json.loads(raw) if raw else None
            try:
                code, answer = api.handle(self.command, url.path, params, body)
            except Exception as exc:  # a bug in a test's API: a 500 the client reports, not a hang
                code, answer = 500, status_body(500, "InternalError", f"{type(exc).__name__}: {exc}")
            data = json.dumps(answer).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _watch(self, path: str, params: dict[str, str]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def write(line: bytes) -> None:
                self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                self.wfile.flush()

            try:
                api.watch(path, params, write)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass  # the client went (an informer stopping)
            self.close_connection = True

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _request

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler
