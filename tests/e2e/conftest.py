"""Fixtures for the end-to-end tests: the running test cluster that `make cluster-up` described.

`hack/e2e_cluster.py up` writes `.e2e/env` (ports, URLs, the admin token, the kubeconfig and kubectl
paths). Without it these tests fail, never skip: a skipped end-to-end tier proves nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .support import Kubectl, read_env_file, wait_for

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
