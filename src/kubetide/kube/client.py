"""Cluster access as kubectl and client-go find it, and the one client factory every live command uses.

Order (live contract §1): ``--kubeconfig PATH``, else ``$KUBECONFIG``, else ``~/.kube/config``, else the
in-cluster service account. (client-go prefers an explicit path, then ``$KUBECONFIG``, then in-cluster
only when no file is found; lightkube's ``from_env`` tries in-cluster first, so the order is ours.)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import httpx2
import yaml
from lightkube import Client
from lightkube.config.client_adapter import Client as _adapter_client
from lightkube.config.client_adapter import ConnectionParams
from lightkube.config.kubeconfig import KubeConfig
from lightkube.core.exceptions import ConfigError

from kubetide.kube.redaction import register_kubeconfig_secrets

__all__ = ["KubeAccessError", "RequestHook", "load_kubeconfig", "make_client", "make_http_client"]

DEFAULT_TIMEOUT_S = 10.0
# Called with each request before it is sent; may raise to keep it from being sent (a shadow's
# read-only rule, kubetide.live.guard.readonly).
RequestHook = Callable[[httpx2.Request], None]


class KubeAccessError(Exception):
    """No usable cluster configuration: the message says what was tried."""


def load_kubeconfig(path: str | None = None) -> KubeConfig:
    """The configuration to use, by kubectl's order of precedence; KubeAccessError when none works."""
    tried: list[str] = []
    candidates: list[str] = []
    if path:
        candidates.append(path)
    else:
        env = os.environ.get("KUBECONFIG", "")
        # $KUBECONFIG may list several files (kubectl merges them); the first existing one is used.
        candidates += [p for p in env.split(os.pathsep) if p]
        candidates.append(str(Path.home() / ".kube" / "config"))
    for candidate in candidates:
        if not Path(candidate).is_file():
            tried.append(f"{candidate}: no such file")
            if path:
                break
            continue
        try:
            config = KubeConfig.from_file(candidate)
        except Exception as exc:  # lightkube's reader lets YAML, lookup and type errors through
            raise KubeAccessError(f"cannot use the cluster configuration {candidate}: {_why(exc)}") from exc
        register_kubeconfig_secrets(config)  # never logged, whatever a library logs
        return config
    if not path:
        try:
            config = KubeConfig.from_service_account()
            register_kubeconfig_secrets(config)
            return config
        except ConfigError as exc:
            tried.append(f"in-cluster service account: {exc}")
    raise KubeAccessError("no cluster configuration found (" + "; ".join(tried) + ")")


def _why(exc: Exception) -> str:
    """One line saying what is wrong with a kubeconfig file."""
    if isinstance(exc, yaml.YAMLError):
        return "invalid YAML: " + str(exc).splitlines()[0]
    if isinstance(exc, KeyError):
        return f"no {exc} in it"
    if isinstance(exc, AttributeError | TypeError):
        return "not a kubeconfig (a mapping with clusters, users and contexts)"
    return " ".join(str(exc).split()) or type(exc).__name__


def make_client(
    kubeconfig: str | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    field_manager: str = "kubetide",
    on_request: RequestHook | None = None,
) -> Client:
    """A lightkube client for the configuration ``load_kubeconfig(kubeconfig)`` finds; ``on_request``
    sees every request before it is sent."""
    config = load_kubeconfig(kubeconfig)
    client = Client(config=config, timeout=httpx2.Timeout(timeout_s), field_manager=field_manager)
    if on_request is not None:
        # lightkube offers no hook of its own: its httpx client is the one every call goes through.
        _hook(client._client._client, on_request)
    return client


def _hook(http: httpx2.Client, on_request: RequestHook) -> None:
    hooks = http.event_hooks
    http.event_hooks = {**hooks, "request": [on_request, *hooks.get("request", [])]}


def make_http_client(
    kubeconfig: str | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    on_request: RequestHook | None = None,
) -> httpx2.Client:
    """An httpx client with the same server, TLS and credentials lightkube would use, for raw JSON.

    The watch caches and the port decode JSON themselves (:mod:`kubetide.kube.rest` says why); they
    share lightkube's configuration code so authentication is never implemented twice.
    """
    config = load_kubeconfig(kubeconfig).get()
    if config is None:
        raise KubeAccessError("the kubeconfig has no current context")
    http = _adapter_client(config, ConnectionParams(timeout=httpx2.Timeout(timeout_s)))
    if on_request is not None:
        _hook(http, on_request)
    return http
