"""``kubetide node-agent``: run the kubelet's stand-in for the nodes kubetide creates (live contract §4).

With ``--aws-endpoint-url`` (a test endpoint such as moto) it also registers a Node for each instance of
the Auto Scaling groups it is told about (``--aws-group``, ``--node-group-auto-discovery``) and deletes
the Nodes of terminated ones (:mod:`kubetide.live.providers.aws.nodes`).

Exit codes: 0 after SIGTERM or SIGINT; 2 for bad flags or no usable cluster configuration.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType

import click
from lightkube import Client

from kubetide.commands.run.logs import LIBRARY_LEVELS, own_level
from kubetide.kube.client import KubeAccessError, make_client
from kubetide.live.agent.agent import DEFAULT_NODE_SELECTOR, AgentOptions, NodeAgent
from kubetide.live.agent.api import LightkubeAgentApi
from kubetide.live.agent.logs import configure_logging
from kubetide.live.agent.server import MetricsServer, parse_address

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
@click.option(
    "-v",
    "--v",
    "verbosity",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="The agent's own verbosity, as klog's -v (4 and up: debug).",
)
@click.option(
    "--library-log-level",
    type=click.Choice(list(LIBRARY_LEVELS)),
    default="warning",
    show_default=True,
    help="Log level of the libraries underneath (httpx, lightkube, botocore), independent of -v; "
    "secrets are redacted at every level.",
)
@click.option(
    "--cloud-provider",
    type=click.Choice(["kwok", "aws"]),
    default=None,
    help="aws: also register Nodes for the instances of a test AWS endpoint (default: aws when "
    "--aws-endpoint-url is given, or $AWS_ENDPOINT_URL with --aws-group or --node-group-auto-discovery; "
    "else kwok).",
)
@click.option("--aws-endpoint-url", default="", help="The test AWS endpoint (moto); else $AWS_ENDPOINT_URL.")
@click.option("--aws-region", default="", help="AWS region (else $AWS_REGION).")
@click.option(
    "--aws-group", multiple=True, help="An Auto Scaling group whose instances get Nodes (repeatable)."
)
@click.option(
    "--node-group-auto-discovery",
    multiple=True,
    help="asg:tag=KEY[=VALUE],... as Cluster Autoscaler's: the groups whose instances get Nodes.",
)
@click.option("--aws-sync-period", default=2.0, show_default=True, help="Seconds between AWS listings.")
def node_agent(
    kubeconfig: str | None,
    node_selector: str,
    address: str,
    logging_format: str,
    verbosity: int,
    library_log_level: str,
    cloud_provider: str | None,
    aws_endpoint_url: str,
    aws_region: str,
    aws_group: tuple[str, ...],
    node_group_auto_discovery: tuple[str, ...],
    aws_sync_period: float,
) -> None:
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
    # Flag errors go plainly to stderr (click.echo); what the AWS check logs goes through the handler.
    configure_logging(logging_format, own_level(verbosity), LIBRARY_LEVELS[library_log_level])
    endpoint = aws_endpoint_url or os.environ.get("AWS_ENDPOINT_URL", "")
    aws_sync = None
    # $AWS_ENDPOINT_URL alone may be set for other tools: with groups to watch, it means aws too.
    implied = bool(aws_endpoint_url or (endpoint and (aws_group or node_group_auto_discovery)))
    if (cloud_provider or ("aws" if implied else "kwok")) == "aws":
        aws_sync = _aws_registrar(client, endpoint, aws_region, aws_group, node_group_auto_discovery)
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
    if aws_sync is not None:
        threading.Thread(target=aws_sync, args=(stop, aws_sync_period), name="aws", daemon=True).start()
    # The main thread only waits, so signal handlers run promptly (they run on the main thread).
    while worker.is_alive():
        worker.join(timeout=0.5)
    server.stop()
    log.info("node agent stopped")


def _aws_registrar(
    client: Client, endpoint: str, region: str, groups: Sequence[str], discovery: Sequence[str]
) -> Callable[[threading.Event, float], None]:
    """The loop registering Nodes for a test endpoint's instances, or exit 2 naming the bad flag."""
    if not endpoint:
        click.echo(
            "error: --cloud-provider=aws: the node agent registers instances of a test endpoint only "
            "(--aws-endpoint-url): real instances run their own kubelet",
            err=True,
        )
        sys.exit(EXIT_INVALID)
    try:
        from kubetide.live.providers.aws import AwsConfigError, build_aws_provider
        from kubetide.live.providers.aws.nodes import register_instances
        from kubetide.live.providers.kwok.api import LightkubeKwokApi
    except ImportError:
        click.echo("error: --cloud-provider=aws needs boto3: pip install 'kubetide[aws]'", err=True)
        sys.exit(EXIT_INVALID)
    try:
        provider = build_aws_provider((), discovery, names=groups, region=region, endpoint_url=endpoint)
    except AwsConfigError as exc:
        for flag, problem in exc.errors:
            flag = {"nodes": "aws-group"}.get(flag, flag)
            click.echo(f"error: --{flag}: {problem}", err=True)
        sys.exit(EXIT_INVALID)
    check = provider.startup_check()  # credentials, region, endpoint and the named groups, in one call
    problems = [("aws-endpoint-url", check.failure)] if check.failure else []
    problems += [("aws-group", m.reason) for m in check.missing]
    for flag, problem in problems:
        click.echo(f"error: --{flag}: {problem}", err=True)
    if problems:
        sys.exit(EXIT_INVALID)
    api = LightkubeKwokApi(client)

    def loop(stop: threading.Event, period: float) -> None:
        while not stop.is_set():
            try:
                register_instances(provider, api)
            except Exception as exc:  # one failed pass is logged; the next one tries again
                log.warning("registering AWS instances failed: %s", exc)
            stop.wait(period)

    return loop
