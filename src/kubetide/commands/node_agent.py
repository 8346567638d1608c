"""``kubetide node-agent``: run the kubelet's stand-in for the nodes kubetide creates (live contract §4).

Exit codes: 0 after SIGTERM or SIGINT; 2 for bad flags or no usable cluster configuration.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from types import FrameType

import click

from kubetide.kube.agent.agent import DEFAULT_NODE_SELECTOR, AgentOptions, NodeAgent
from kubetide.kube.agent.api import LightkubeAgentApi
from kubetide.kube.agent.logs import configure_logging
from kubetide.kube.agent.server import MetricsServer, parse_address
from kubetide.kube.client import KubeAccessError, make_client

EXIT_INVALID = 2
log = logging.getLogger("kubetide.node_agent")


@click.command(
    "node-agent", short_help="Keep kubetide's nodes Ready and run their pods (a kubelet stand-in)."
)
@click.option(
    "--kubeconfig", default=None, help="Path to a kubeconfig (else $KUBECONFIG, ~/.kube/config, in-cluster)."
)
@click.option(
    "--node-selector",
    default=DEFAULT_NODE_SELECTOR,
    show_default=True,
    help="Label selector of the nodes this agent owns (kubectl's syntax).",
)
@click.option(
    "--address",
    default="127.0.0.1:10255",
    show_default=True,
    help="host:port of the HTTP server (/metrics/resource, /healthz).",
)
@click.option("--logging-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def node_agent(kubeconfig: str | None, node_selector: str, address: str, logging_format: str) -> None:
    """Act as the kubelet of the nodes kubetide creates: renew their Leases and post Ready, run the pods
    bound to them (startup delays, Job durations, graceful deletion from annotations), and serve their
    usage (the kubetide.io/usage annotation) on /metrics/resource in the kubelet's format."""
    try:
        host_port = parse_address(address)
    except ValueError as exc:
        click.echo(f"error: --address: {exc}", err=True)
        sys.exit(EXIT_INVALID)
    try:
        client = make_client(kubeconfig, field_manager="kubetide-node-agent")
    except KubeAccessError as exc:
        click.echo(f"error: --kubeconfig: {exc}", err=True)
        sys.exit(EXIT_INVALID)
    configure_logging(logging_format)  # after the flag checks: their errors go plainly to stderr
    agent = NodeAgent(LightkubeAgentApi(client), AgentOptions(node_selector=node_selector))
    try:
        server = MetricsServer(host_port, agent.ledger.render)
    except OSError as exc:
        click.echo(f"error: --address: cannot listen on {address}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_INVALID)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.start()
    agent.start_watches(stop)
    log.info("node agent started: nodes %r, serving on %s:%d", node_selector, host_port[0], server.port)
    worker = threading.Thread(target=agent.run, args=(stop,), name="worker")
    worker.start()
    # The main thread only waits, so signal handlers run promptly (they run on the main thread).
    while worker.is_alive():
        worker.join(timeout=0.5)
    server.stop()
    log.info("node agent stopped")
