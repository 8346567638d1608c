"""Starts and stops the real Kubernetes control plane the end-to-end tests run against.

``up`` installs what is missing (Debian's etcd, Prometheus and openssl; the 1.20.2 control plane and
kubectl through ``hack/k8s-build.sh``), then starts, on free 127.0.0.1 ports and detached from this
process: etcd, kube-apiserver, kube-scheduler, kube-controller-manager (every controller but the
built-in HPA), Prometheus scraping the node agent, and ``kubetide node-agent``. It waits for each to
be healthy, writes ``.e2e/kubeconfig`` (admin), ``.e2e/env`` (shell-sourceable) and ``.e2e/pids``, and
returns. ``down`` stops exactly the processes listed in ``.e2e/pids``. Logs stay in ``.e2e/logs/``.
``restart COMPONENT [--down-for SECONDS]`` stops one running component (e.g. ``kube-apiserver``, for
the tests of recovery), waits, and starts it again with the very command line it had (read from
``/proc``), then records its new pid in ``.e2e/pids``.

Stdlib only, so it runs before the virtualenv exists. See ../shared/infra/control-plane.md for why each
flag is there.

Usage: python hack/e2e_cluster.py up [--no-agent] | down | restart COMPONENT [--down-for SECONDS]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import http.client
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
E2E = ROOT / ".e2e"
LOGS = E2E / "logs"
PKI = E2E / "pki"
PIDS = E2E / "pids"
ENV_FILE = E2E / "env"
KUBECONFIG = E2E / "kubeconfig"
AUDIT_LOG = E2E / "audit.log"
K8S_CACHE = Path(
    os.environ.get("KUBETIDE_K8S_CACHE", Path.home() / ".cache" / "kubetide" / "k8s-1.20.2")
).resolve()
K8S_BIN = K8S_CACHE / "bin"
DEBIAN_PACKAGES = ("etcd-server", "prometheus", "openssl")
# Every child carries this in its environment: `down` only signals a pid whose /proc environ has it,
# so a pid reused by an unrelated process after a crash is never killed.
OWNER_MARK = "KUBETIDE_E2E_DIR"
# Prometheus scrapes every 5 s (its default is 1 min) so tests see a new sample within seconds.
SCRAPE_INTERVAL = "5s"
STOP_TIMEOUT = 20.0


class StartupError(Exception):
    """A component failed to start; ``component`` names the log to show."""

    def __init__(self, component: str, message: str) -> None:
        super().__init__(f"{component}: {message}")
        self.component = component


@dataclass(frozen=True)
class Ports:
    """Every port the cluster listens on, all picked free on 127.0.0.1."""

    etcd: int
    etcd_peer: int
    apiserver: int
    scheduler: int
    controller_manager: int
    prometheus: int
    agent: int

    @classmethod
    def pick(cls) -> Ports:
        # All sockets stay open until every port is chosen, so no port is handed out twice.
        with contextlib.ExitStack() as stack:
            ports = []
            for _ in fields(cls):
                sock = stack.enter_context(socket.socket())
                sock.bind(("127.0.0.1", 0))
                ports.append(sock.getsockname()[1])
        return cls(*ports)


@dataclass
class Cluster:
    """What `up` has started so far (so a failure can stop exactly that)."""

    ports: Ports
    token: str
    agent: bool
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def api_url(self) -> str:
        return f"https://127.0.0.1:{self.ports.apiserver}"


def log(message: str) -> None:
    print(f"[e2e-cluster] {message}", flush=True)


# --- processes -------------------------------------------------------------------------------------


def read_pids() -> list[tuple[str, int]]:
    if not PIDS.exists():
        return []
    entries = []
    for line in PIDS.read_text().splitlines():
        name, _, pid = line.partition(" ")
        if pid.strip().isdigit():
            entries.append((name, int(pid)))
    return entries


def is_ours(pid: int) -> bool:
    """True while `pid` runs (not a zombie) and was started by this checkout's `up`."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False  # gone, or a zombie's environ is unreadable/empty
    return f"{OWNER_MARK}={E2E}".encode() in environ.split(b"\0")


def spawn(cluster: Cluster, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
    """Starts one component detached (own session), logging to .e2e/logs/<name>.log."""
    env = {**os.environ, OWNER_MARK: str(E2E)}
    with (LOGS / f"{name}.log").open("wb") as out:
        proc = subprocess.Popen(
            argv,
            cwd=E2E,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    cluster.procs[name] = proc
    # Recorded at once, so `down` can stop it even if `up` dies before the end.
    with PIDS.open("a") as pids:
        pids.write(f"{name} {proc.pid}\n")
    log(f"started {name} (pid {proc.pid})")
    return proc


def stop_all() -> None:
    """SIGTERM to each recorded process group, then SIGKILL to what outlives the deadline.

    Leaves .e2e/ without pids and env, so nothing describes a cluster that no longer runs.
    """
    entries = [(name, pid) for name, pid in read_pids() if is_ours(pid)]
    for name, pid in reversed(entries):  # dependents first, etcd last
        log(f"stopping {name} (pid {pid})")
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline and any(is_ours(pid) for _, pid in entries):
        time.sleep(0.2)
    for name, pid in entries:
        if is_ours(pid):
            log(f"{name} (pid {pid}) ignored SIGTERM for {STOP_TIMEOUT:.0f}s: SIGKILL")
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
    PIDS.unlink(missing_ok=True)
    ENV_FILE.unlink(missing_ok=True)  # it describes a running cluster: the tests then say to start one


# --- waiting ---------------------------------------------------------------------------------------


def http_get(url: str, token: str | None = None, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    """(status, body); raises OSError when nothing answers."""
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    # Loopback only: never through an http(s)_proxy the environment may set for the registries.
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
    )
    try:
        with opener.open(request, timeout=3) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def insecure_context() -> ssl.SSLContext:
    # The scheduler and controller-manager serve /healthz with a self-signed certificate of their own.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def api_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(PKI / "ca.crt"))


def wait_until(
    cluster: Cluster, component: str, what: str, check: Callable[[], bool], timeout: float
) -> None:
    """Polls `check` until it holds; fails early if the component's process has exited."""
    started = time.monotonic()
    deadline = started + timeout
    last_error = ""
    while time.monotonic() < deadline:
        proc = cluster.procs.get(component)
        if proc is not None and proc.poll() is not None:
            raise StartupError(component, f"exited with status {proc.returncode} before {what}")
        try:
            if check():
                log(f"{component}: {what} ({time.monotonic() - started:.1f}s)")
                return
        # Refused or reset connections, TLS errors, a half-started server's garbled reply or body.
        except (OSError, http.client.HTTPException, ValueError) as error:
            last_error = f" (last error: {error})"
        time.sleep(0.25)
    raise StartupError(component, f"not {what} within {timeout:.0f}s{last_error}")


def answers_ok(url: str, token: str | None = None, context: ssl.SSLContext | None = None) -> bool:
    status, _ = http_get(url, token, context)
    return status == 200


def answers_http(url: str) -> bool:
    http_get(url)  # any HTTP status counts: the port is served
    return True


def api_json(cluster: Cluster, path: str) -> dict[str, object] | None:
    status, body = http_get(cluster.api_url + path, cluster.token, api_context())
    return json.loads(body) if status == 200 else None


def default_token_minted(cluster: Cluster) -> bool:
    # The controller-manager's service-account and token controllers give `default` its token secret;
    # until then pods without automountServiceAccountToken: false are rejected.
    account = api_json(cluster, "/api/v1/namespaces/default/serviceaccounts/default")
    return bool(account and account.get("secrets"))


# --- files -----------------------------------------------------------------------------------------


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_pki() -> None:
    """A CA, the API server's serving certificate signed by it, and the service-account key pair."""
    PKI.mkdir(parents=True, exist_ok=True)
    ca_key, ca_crt = PKI / "ca.key", PKI / "ca.crt"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=kubetide-e2e-ca",
            "-keyout", str(ca_key), "-out", str(ca_crt))  # fmt: skip
    extensions = PKI / "apiserver.ext"
    extensions.write_text(
        "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,"
        "DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
        "extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
    )
    csr = PKI / "apiserver.csr"
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kube-apiserver",
            "-keyout", str(PKI / "apiserver.key"), "-out", str(csr))  # fmt: skip
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_crt), "-CAkey", str(ca_key), "-CAcreateserial",
            "-days", "3650", "-extfile", str(extensions), "-out", str(PKI / "apiserver.crt"))  # fmt: skip
    openssl("genrsa", "-out", str(PKI / "sa.key"), "2048")
    openssl("rsa", "-in", str(PKI / "sa.key"), "-pubout", "-out", str(PKI / "sa.pub"))


def write_kubeconfig(cluster: Cluster) -> None:
    # JSON is YAML: kubectl and every client read it.
    ca_data = base64.b64encode((PKI / "ca.crt").read_bytes()).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "e2e", "cluster": {"server": cluster.api_url, "certificate-authority-data": ca_data}}
        ],
        "users": [{"name": "admin", "user": {"token": cluster.token}}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "admin", "namespace": "default"}}],
        "current-context": "e2e",
    }
    KUBECONFIG.write_text(json.dumps(config, indent=2) + "\n")
    KUBECONFIG.chmod(0o600)


def write_prometheus_config(cluster: Cluster) -> Path:
    ports = cluster.ports
    config = {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
        "scrape_configs": [
            {"job_name": "prometheus", "static_configs": [{"targets": [f"127.0.0.1:{ports.prometheus}"]}]},
            {
                "job_name": "kubetide-node-agent",
                "metrics_path": "/metrics/resource",
                "static_configs": [{"targets": [f"127.0.0.1:{ports.agent}"]}],
            },
        ],
    }
    path = E2E / "prometheus.yml"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def write_env(cluster: Cluster) -> None:
    ports = cluster.ports
    values = {
        "KUBECONFIG": KUBECONFIG,
        "KUBE_API_URL": cluster.api_url,
        "KUBE_ADMIN_TOKEN": cluster.token,
        "KUBE_CA_FILE": PKI / "ca.crt",
        "KUBECTL": K8S_BIN / "kubectl",
        "PROMETHEUS_URL": f"http://127.0.0.1:{ports.prometheus}",
        "AGENT_ADDRESS": f"127.0.0.1:{ports.agent}",
        "AGENT_STARTED": int(cluster.agent),
        "ETCD_URL": f"http://127.0.0.1:{ports.etcd}",
        "ETCD_PORT": ports.etcd,
        "ETCD_PEER_PORT": ports.etcd_peer,
        "APISERVER_PORT": ports.apiserver,
        "SCHEDULER_PORT": ports.scheduler,
        "CONTROLLER_MANAGER_PORT": ports.controller_manager,
        "PROMETHEUS_PORT": ports.prometheus,
        "AGENT_PORT": ports.agent,
        "AUDIT_LOG": AUDIT_LOG,
    }
    ENV_FILE.write_text("".join(f"{key}={shlex.quote(str(value))}\n" for key, value in values.items()))


def read_env() -> dict[str, str]:
    env = {}
    for line in ENV_FILE.read_text().splitlines():
        key, _, value = line.partition("=")
        env[key] = "".join(shlex.split(value))
    return env


# --- components, in start order --------------------------------------------------------------------


def start_etcd(cluster: Cluster) -> None:
    client = f"http://127.0.0.1:{cluster.ports.etcd}"
    peer = f"http://127.0.0.1:{cluster.ports.etcd_peer}"
    # Not 2379/2380: a packaged etcd service may own them, and two clusters must not collide.
    spawn(cluster, "etcd", [
        "etcd", "--name", "default", "--data-dir", str(E2E / "etcd"),
        "--listen-client-urls", client, "--advertise-client-urls", client,
        "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
        "--initial-cluster", f"default={peer}",
    ])  # fmt: skip
    wait_until(cluster, "etcd", "healthy", lambda: b'"true"' in http_get(f"{client}/health")[1], 30)


# The API server's audit log: every request that is not a read (get, list, watch), with its user, so a
# test can prove who wrote what (the shadow's test: nothing but Events).
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  verbs: ["get", "list", "watch"]
- level: Metadata
"""


def start_apiserver(cluster: Cluster) -> None:
    policy = E2E / "audit-policy.yaml"
    policy.write_text(AUDIT_POLICY)
    token_file = PKI / "tokens.csv"
    token_file.write_text(f'{cluster.token},admin,admin,"system:masters"\n')
    spawn(cluster, "kube-apiserver", [
        str(K8S_BIN / "kube-apiserver"),
        f"--etcd-servers=http://127.0.0.1:{cluster.ports.etcd}",
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
        f"--secure-port={cluster.ports.apiserver}", "--insecure-port=0",
        f"--cert-dir={PKI / 'apiserver'}",
        f"--tls-cert-file={PKI / 'apiserver.crt'}", f"--tls-private-key-file={PKI / 'apiserver.key'}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={PKI / 'sa.pub'}",
        f"--service-account-signing-key-file={PKI / 'sa.key'}",
        "--service-cluster-ip-range=10.0.0.0/24",
        "--authorization-mode=RBAC",
        f"--token-auth-file={token_file}",
        "--allow-privileged=true",
        f"--audit-policy-file={policy}", f"--audit-log-path={AUDIT_LOG}", "--audit-log-format=json",
    ])  # fmt: skip
    readyz = f"{cluster.api_url}/readyz"
    wait_until(
        cluster, "kube-apiserver", "ready", lambda: answers_ok(readyz, cluster.token, api_context()), 90
    )
    # The default namespace is created by a post-start hook a second or two after /readyz.
    wait_until(
        cluster,
        "kube-apiserver",
        "serving namespace default",
        lambda: api_json(cluster, "/api/v1/namespaces/default") is not None,
        60,
    )


def control_plane_flags(name: str, port: int) -> list[str]:
    """Flags the scheduler and the controller-manager share."""
    return [
        f"--kubeconfig={KUBECONFIG}",
        f"--authentication-kubeconfig={KUBECONFIG}",
        f"--authorization-kubeconfig={KUBECONFIG}",
        "--leader-elect=false",
        "--port=0",  # no insecure port
        # Their default secure ports (10259/10257) would collide between two clusters on one machine.
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        f"--cert-dir={PKI / name}",
    ]


def start_scheduler(cluster: Cluster) -> None:
    port = cluster.ports.scheduler
    spawn(
        cluster,
        "kube-scheduler",
        [str(K8S_BIN / "kube-scheduler"), *control_plane_flags("kube-scheduler", port)],
    )
    healthz = f"https://127.0.0.1:{port}/healthz"
    wait_until(
        cluster, "kube-scheduler", "healthy", lambda: answers_ok(healthz, context=insecure_context()), 60
    )


def start_controller_manager(cluster: Cluster) -> None:
    port = cluster.ports.controller_manager
    spawn(cluster, "kube-controller-manager", [
        str(K8S_BIN / "kube-controller-manager"),
        *control_plane_flags("kube-controller-manager", port),
        # Every controller (node lifecycle included) but the built-in HPA, which would fight kubetide's.
        "--controllers=*,-horizontalpodautoscaling",
        # Without these no service-account token is minted and pods of a ServiceAccount are rejected.
        f"--service-account-private-key-file={PKI / 'sa.key'}",
        f"--root-ca-file={PKI / 'ca.crt'}",
    ])  # fmt: skip
    healthz = f"https://127.0.0.1:{port}/healthz"
    wait_until(
        cluster,
        "kube-controller-manager",
        "healthy",
        lambda: answers_ok(healthz, context=insecure_context()),
        60,
    )
    wait_until(
        cluster,
        "kube-controller-manager",
        "minting the default ServiceAccount's token",
        lambda: default_token_minted(cluster),
        60,
    )


def start_prometheus(cluster: Cluster) -> None:
    config = write_prometheus_config(cluster)
    url = f"http://127.0.0.1:{cluster.ports.prometheus}"
    # Not 9090: a packaged Prometheus service may own it.
    spawn(cluster, "prometheus", [
        "prometheus", f"--config.file={config}", f"--storage.tsdb.path={E2E / 'prometheus'}",
        f"--web.listen-address=127.0.0.1:{cluster.ports.prometheus}",
    ])  # fmt: skip
    wait_until(cluster, "prometheus", "ready", lambda: answers_ok(f"{url}/-/ready"), 30)


def start_agent(cluster: Cluster) -> None:
    address = f"127.0.0.1:{cluster.ports.agent}"
    agent = ROOT / ".venv" / "bin" / "kubetide"
    spawn(
        cluster,
        "node-agent",
        [str(agent), "node-agent", "--kubeconfig", str(KUBECONFIG), "--address", address],
    )
    wait_until(cluster, "node-agent", "serving HTTP", lambda: answers_http(f"http://{address}/"), 60)


# --- commands --------------------------------------------------------------------------------------


def already_up() -> bool:
    """True when every recorded process runs and the API server answers /readyz."""
    entries = read_pids()
    if not entries or not ENV_FILE.exists() or not all(is_ours(pid) for _, pid in entries):
        return False
    env = read_env()
    try:
        return answers_ok(f"{env['KUBE_API_URL']}/readyz", env["KUBE_ADMIN_TOKEN"], api_context())
    except (OSError, http.client.HTTPException, KeyError):
        return False


def ensure_binaries() -> None:
    subprocess.run(
        [str(ROOT / "hack" / "apt-install.sh"), *DEBIAN_PACKAGES], check=True, stdin=subprocess.DEVNULL
    )
    env = {**os.environ, "KUBETIDE_K8S_CACHE": str(K8S_CACHE)}
    subprocess.run([str(ROOT / "hack" / "k8s-build.sh")], check=True, env=env, stdin=subprocess.DEVNULL)


def reset_state() -> None:
    """A fresh cluster each time: new keys, empty etcd and Prometheus storage, new logs."""
    stop_all()  # leftovers of a cluster that half-died
    # The previous run's logs go too: a stale node-agent.log must not pass for this run's.
    for path in (E2E / "etcd", E2E / "prometheus", PKI, LOGS):
        shutil.rmtree(path, ignore_errors=True)
    LOGS.mkdir(parents=True, exist_ok=True)


def tail(component: str, lines: int = 40) -> str:
    path = LOGS / f"{component}.log"
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def up(agent: bool) -> int:
    if already_up():
        log("cluster already up")
        return 0
    ensure_binaries()
    reset_state()
    cluster = Cluster(ports=Ports.pick(), token=secrets.token_hex(24), agent=agent)
    started = time.monotonic()
    try:
        make_pki()
        write_kubeconfig(cluster)
        start_etcd(cluster)
        start_apiserver(cluster)
        start_scheduler(cluster)
        start_controller_manager(cluster)
        start_prometheus(cluster)
        if agent:
            start_agent(cluster)
        else:
            log("node agent not started (--no-agent / KUBETIDE_E2E_NO_AGENT=1)")
    except StartupError as error:
        log(
            f"FAILED: {error}\n--- last lines of .e2e/logs/{error.component}.log ---\n{tail(error.component)}\n---"
        )
        stop_all()
        return 1
    except BaseException:
        stop_all()
        raise
    write_env(cluster)
    log(f"cluster up in {time.monotonic() - started:.1f}s: API {cluster.api_url}; source .e2e/env")
    return 0


def down() -> int:
    if not PIDS.exists():
        log("no cluster recorded in .e2e/pids: nothing to stop")
        return 0
    stop_all()
    log("cluster down (logs kept in .e2e/logs/)")
    return 0


def restart(component: str, down_for: float) -> int:
    """Stop ``component`` (its process group), wait ``down_for`` seconds, start it again with the same
    argv and environment, replace its line in .e2e/pids, and wait until it answers (the API server:
    /readyz)."""
    pids = read_pids()
    pid = next((p for name, p in pids if name == component), None)
    if pid is None or not is_ours(pid):
        log(f"{component} is not running in this cluster (see .e2e/pids)")
        return 1
    argv = [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    log(f"stopping {component} (pid {pid}) for {down_for:.0f}s")
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline and is_ours(pid):
        time.sleep(0.2)
    if is_ours(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    time.sleep(down_for)
    env = {**os.environ, OWNER_MARK: str(E2E)}
    with (LOGS / f"{component}.log").open("ab") as out:
        proc = subprocess.Popen(
            argv, cwd=E2E, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    PIDS.write_text("".join(f"{name} {proc.pid if name == component else p}\n" for name, p in pids))
    log(f"started {component} again (pid {proc.pid})")
    if component == "kube-apiserver":
        cluster_env = read_env()
        readyz = f"{cluster_env['KUBE_API_URL']}/readyz"
        deadline = time.monotonic() + 90
        while not _answers(readyz, cluster_env["KUBE_ADMIN_TOKEN"]):
            if proc.poll() is not None or time.monotonic() > deadline:
                log(f"FAILED: kube-apiserver not ready again\n{tail(component)}")
                return 1
            time.sleep(0.5)
        log("kube-apiserver ready again")
    return 0


def _answers(url: str, token: str) -> bool:
    try:
        return answers_ok(url, token, api_context())
    except (OSError, http.client.HTTPException, ValueError):
        return False


@contextlib.contextmanager
def exclusive() -> Iterator[None]:
    """One `up` or `down` at a time per checkout."""
    E2E.mkdir(exist_ok=True)
    with (E2E / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    up_parser = commands.add_parser("up", help="start the cluster (idempotent)")
    up_parser.add_argument(
        "--no-agent",
        action="store_true",
        default=os.environ.get("KUBETIDE_E2E_NO_AGENT", "") in ("1", "true", "yes"),
        help="do not start `kubetide node-agent` (also KUBETIDE_E2E_NO_AGENT=1)",
    )
    commands.add_parser("down", help="stop the processes in .e2e/pids")
    restart_parser = commands.add_parser(
        "restart", help="stop one component and start it again with the same flags (e.g. kube-apiserver)"
    )
    restart_parser.add_argument("component", help="its name in .e2e/pids, e.g. kube-apiserver")
    restart_parser.add_argument(
        "--down-for", type=float, default=0.0, metavar="SECONDS", help="how long it stays stopped"
    )
    args = parser.parse_args(argv)
    with exclusive():
        if args.command == "restart":
            return restart(args.component, args.down_for)
        return up(agent=not args.no_agent) if args.command == "up" else down()


if __name__ == "__main__":
    sys.exit(main())
