"""Fixtures for the end-to-end tests: the running test cluster that `make cluster-up` described.

`hack/e2e_cluster.py up` writes `.e2e/env` (ports, URLs, the admin token, the kubeconfig and kubectl
paths). Without it these tests fail, never skip: a skipped end-to-end tier proves nothing.
"""

from __future__ import annotations

import base64
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .support import Kubectl, KubetideProcess, free_port, read_env_file, wait_for

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV_FILE = REPO_ROOT / ".e2e" / "env"


@pytest.fixture(scope="session")
def e2e_env() -> dict[str, str]:
    if not ENV_FILE.exists():
        pytest.fail(
            f"{ENV_FILE.relative_to(REPO_ROOT)} is missing: run `make cluster-up` first (or `make e2e`)",
            pytrace=False,
        )
    return read_env_file(ENV_FILE)


@pytest.fixture(scope="session")
def kubeconfig_path(e2e_env: dict[str, str]) -> Path:
    return Path(e2e_env["KUBECONFIG"])


@pytest.fixture(scope="session")
def kubectl(e2e_env: dict[str, str], kubeconfig_path: Path) -> Kubectl:
    return Kubectl(e2e_env["KUBECTL"], kubeconfig_path)


@pytest.fixture(name="wait_for", scope="session")
def wait_for_fixture() -> Callable[..., Any]:
    return wait_for


COMPONENTS = ("cluster-autoscaler", "hpa", "escalator", "recorder")


@pytest.fixture(scope="session")
def service_accounts(
    kubectl: Kubectl, kubeconfig_path: Path, wait_for: Callable[..., Any]
) -> dict[str, Path]:
    """deploy/rbac applied as a user would (`kubectl apply -k`), and a kubeconfig per component with
    its ServiceAccount's token: the tests run kubetide with exactly the privileges deploy/ grants."""
    kubectl("apply", "-k", str(REPO_ROOT / "deploy" / "rbac"))
    admin = yaml.safe_load(kubeconfig_path.read_text())
    cluster = admin["clusters"][0]["cluster"]
    out: dict[str, Path] = {}
    for component in COMPONENTS:
        account = f"kubetide-{component}"

        def token(account: str = account) -> str | None:
            sa = kubectl.json("-n", "kubetide", "get", "serviceaccount", account)
            secrets = [s["name"] for s in sa.get("secrets") or []]
            if not secrets:
                return None
            secret = kubectl.json("-n", "kubetide", "get", "secret", secrets[0])
            data = secret.get("data") or {}
            return base64.b64decode(data["token"]).decode() if "token" in data else None

        value = wait_for(token, timeout=60, message=f"the token of ServiceAccount kubetide/{account}")
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": cluster}],
            "users": [{"name": account, "user": {"token": value}}],
            "contexts": [
                {"name": account, "context": {"cluster": "e2e", "user": account, "namespace": "kubetide"}}
            ],
            "current-context": account,
        }
        path = ENV_FILE.parent / f"kubeconfig-{component}"
        path.write_text(yaml.safe_dump(config))
        out[component] = path
    return out


@pytest.fixture
def kubetide(request: pytest.FixtureRequest) -> Iterator[Callable[..., KubetideProcess]]:
    """Starts `kubetide run COMPONENT ARGS` processes (free port, log under .e2e/logs/); every one of
    them is stopped when the test ends, whatever happened."""
    started: list[KubetideProcess] = []
    logs = ENV_FILE.parent / "logs"
    logs.mkdir(exist_ok=True)
    binary = str(Path(sys.executable).parent / "kubetide")

    def start(component: str, *args: str, kubeconfig: Path, name: str | None = None) -> KubetideProcess:
        port = free_port()
        label = name or f"{request.node.name}-{component}-{len(started)}"
        argv = [binary, "run", component, *args, f"--kubeconfig={kubeconfig}", f"--address=127.0.0.1:{port}"]
        proc = KubetideProcess(label, argv, logs / f"test-{label}.log", port)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture
def group(kubectl: Kubectl) -> Iterator[str]:
    """A node group of its own (its nodes are deleted afterwards, whatever the test left)."""
    name = f"e2e-{uuid.uuid4().hex[:5]}"
    yield name
    kubectl("delete", "nodes", "-l", f"kubetide.io/node-group={name}", "--wait=false")


@pytest.fixture
def namespace(kubectl: Kubectl) -> Iterator[str]:
    name = f"ca-{uuid.uuid4().hex[:6]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false")
