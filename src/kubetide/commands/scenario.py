"""``kubetide scenario from-cluster``: write a simulator scenario from a live cluster.

"Simulate my cluster" in a minute: node groups from the Nodes, the workloads, HPAs, PDBs and CA's
priority expander configuration as manifests, the autoscalers enabled. What the API cannot tell
(traffic, group bounds, CA's flags) and everything left out is said on stderr, one note a line; stdout
(or ``--output``) gets only the YAML. The file is checked with the simulator's own loader before it is
written, so it always loads: what the loader rejects is dropped and named.

With ``--cloud-provider`` (kwok with ``--cloud-config``, or aws with ``--nodes`` or
``--node-group-auto-discovery``), the node groups, their bounds and each node's group come from the
provider the ``kubetide run`` commands would use, groups with no node included; pods bound to a node
stay bound to the simulated node that stands for it.

This module wires the live reader (:mod:`kubetide.live.export`) to the simulator's loader: the one
place allowed to import both. Exit codes: 0 written; 1 the cluster could not be read; 2 bad flags.
"""

from __future__ import annotations

import copy
import re
import sys
from typing import Any, NoReturn

import click
import httpx2
import yaml
from lightkube import Client
from lightkube.core.exceptions import ApiError, ConfigError

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import CloudProvider
from kubetide.commands.run.logs import configure_quiet_logging
from kubetide.kube.client import KubeAccessError, make_client
from kubetide.live.export import ClusterObjects, ExportOptions, Problem, build_scenario, fit_to_loader
from kubetide.live.export.fit import ExportError
from kubetide.live.export.nodegroups import GroupBounds
from kubetide.live.export.provider import ProviderGroup, provider_groups
from kubetide.live.export.read import read_cluster
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.errors import ManifestError
from kubetide.model.numbers import is_ascii_digits
from kubetide.sim.cloud.instances import node_name
from kubetide.sim.scenario import BUILTIN_CATALOG, parse_scenario
from kubetide.sim.scenario.paths import PathError, parse_path

__all__ = ["scenario"]

EXIT_FAILED = 1
EXIT_INVALID = 2
_SCENARIO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # as metadata.name: a file name
_NODES = re.compile(r"^([0-9]+):([0-9]+):(.+)$")


def _check(document: dict[str, Any]) -> list[Problem]:
    """The simulator's loader as the exporter's checker: its problems with their paths as parts."""
    try:
        parse_scenario(copy.deepcopy(document))
    except ManifestError as exc:
        problems = []
        for error in exc.errors:
            try:
                path: tuple[str | int, ...] = tuple(parse_path(error.path)) if error.path else ()
            except PathError:
                path = ()
            problems.append(Problem(path, error.message))
        return problems
    return []


def _name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not _SCENARIO_NAME.match(value):
        raise click.BadParameter("must be usable as a file name (letters, digits, '.', '_' and '-')")
    return value


def _duration(ctx: click.Context, param: click.Parameter, value: str) -> str | int:
    try:
        parse_duration(int(value) if is_ascii_digits(value) else value)
    except DurationError as exc:
        raise click.BadParameter(str(exc)) from None
    return int(value) if is_ascii_digits(value) else value


def _nodes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    for value in values:
        match = _NODES.match(value)
        if match is None:
            raise click.BadParameter(f"{value!r}: expected MIN:MAX:GROUP, e.g. 1:20:general")
        if int(match.group(2)) < int(match.group(1)):
            raise click.BadParameter(f"{value!r}: MAX must be >= MIN")
    return values


def _bounds(values: tuple[str, ...]) -> dict[str, GroupBounds]:
    out: dict[str, GroupBounds] = {}
    for value in values:
        low, high, group = value.split(":", 2)
        out[group] = GroupBounds(int(low), int(high))
    return out


def _invalid(problems: list[tuple[str, str]]) -> NoReturn:
    for flag, problem in problems:
        click.echo(f"kubetide scenario from-cluster: --{flag.lstrip('-')}: {problem}", err=True)
    sys.exit(EXIT_INVALID)


def _kwok(cloud_config: str, nodes: tuple[str, ...], client: Client) -> CloudProvider:
    from kubetide.live.providers.kwok import KwokConfigError, build_kwok_provider

    try:
        return build_kwok_provider(cloud_config, nodes, client=client)
    except KwokConfigError as exc:
        _invalid([(e.path if e.path.startswith("-") else "cloud-config", str(e)) for e in exc.errors])


def _aws(nodes: tuple[str, ...], discovery: tuple[str, ...], region: str, endpoint: str) -> CloudProvider:
    try:
        from kubetide.live.providers.aws import AwsConfigError, build_aws_provider
    except ImportError:
        _invalid([("cloud-provider", "aws needs boto3, which is not installed: pip install 'kubetide[aws]'")])
    try:
        return build_aws_provider(nodes, discovery, region=region, endpoint_url=endpoint)
    except AwsConfigError as exc:
        _invalid(exc.errors)


def _provider_groups(
    provider: str | None,
    cloud_config: str | None,
    nodes: tuple[str, ...],
    aws: tuple[tuple[str, ...], str, str],
    client: Client,
    cluster: ClusterObjects,
) -> list[ProviderGroup] | None:
    """The provider's groups with their nodes, None without ``--cloud-provider``; exit 2 on bad flags,
    exit 1 when the provider cannot be read."""
    discovery, region, endpoint = aws
    if provider is None:
        extra = [
            f for f, v in (("cloud-config", cloud_config), ("node-group-auto-discovery", discovery)) if v
        ]
        if extra:
            _invalid([(f, "only with --cloud-provider") for f in extra])
        return None
    if provider == "kwok":
        if not cloud_config:
            _invalid([("cloud-config", "the kwok provider needs its node groups file (--cloud-config FILE)")])
        cloud = _kwok(cloud_config, nodes, client)
    else:
        if cloud_config:
            _invalid([("cloud-config", "only with --cloud-provider=kwok")])
        cloud = _aws(nodes, discovery, region, endpoint)
    try:
        return provider_groups(cloud, cluster.nodes)
    except CloudProviderError as exc:
        _fail(f"cannot read the {provider} provider's node groups: {exc}")


def _fail(message: str) -> NoReturn:
    click.echo(f"kubetide scenario from-cluster: {message}", err=True)
    sys.exit(EXIT_FAILED)


def _client(kubeconfig: str | None) -> Client:
    """The client, or a one-line error and exit 1 for a configuration that cannot be used."""
    try:
        return make_client(kubeconfig)
    except KubeAccessError as exc:
        _fail(str(exc))


def _read(client: Client) -> ClusterObjects:
    """The cluster's objects, or a one-line error and exit 1: never a traceback."""
    try:
        return read_cluster(client)
    except ApiError as exc:
        _fail(f"the API server refused: {exc.status.code} {exc.status.reason}: {exc.status.message}")
    except httpx2.HTTPError as exc:
        _fail(f"cannot reach the API server: {exc or type(exc).__name__}")
    except (ConfigError, OSError) as exc:  # credentials that fail when first used (exec plugins, files)
        _fail(f"cannot use the cluster configuration: {exc or type(exc).__name__}")


@click.group(short_help="Write simulator scenarios (from a live cluster).")
def scenario() -> None:
    """Write simulator scenarios."""


@scenario.command("from-cluster", short_help="Write a scenario from a live cluster.")
@click.option(
    "--kubeconfig", default=None, metavar="PATH", help="As kubectl: else $KUBECONFIG, ~/.kube/config."
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the scenario here [default: stdout].",
)
@click.option("--name", default="cluster", show_default=True, callback=_name, help="metadata.name.")
@click.option(
    "--duration", default="24h", show_default=True, callback=_duration, help="spec.duration (Go duration)."
)
@click.option(
    "--namespace",
    "-n",
    "namespaces",
    multiple=True,
    help="Export only these namespaces (repeatable) [default: all but kube-system, kube-public, "
    "kube-node-lease; kube-system's DaemonSets are always kept].",
)
@click.option(
    "--nodes",
    "nodes",
    multiple=True,
    metavar="MIN:MAX:GROUP",
    callback=_nodes,
    help="A node group's bounds, as Cluster Autoscaler's --nodes (repeatable) "
    "[default: 0 and max(10, 2 x its nodes)]; with --cloud-provider, passed to the provider as CA does.",
)
@click.option(
    "--cloud-provider",
    type=click.Choice(["kwok", "aws"]),
    default=None,
    help="Take the node groups, their bounds and each node's group from this provider, as "
    "`kubetide run cluster-autoscaler` would (groups with no node included).",
)
@click.option("--cloud-config", default=None, metavar="FILE", help="The kwok provider's node groups file.")
@click.option(
    "--node-group-auto-discovery",
    multiple=True,
    metavar="asg:tag=KEY[=VALUE],...",
    help="aws: CA's auto-discovery of the Auto Scaling groups (repeatable).",
)
@click.option("--aws-region", default="", help="aws: the groups' region (else $AWS_REGION).")
@click.option(
    "--aws-endpoint-url", default="", help="aws: a test endpoint such as moto (else $AWS_ENDPOINT_URL)."
)
def from_cluster(
    kubeconfig: str | None,
    output: str | None,
    name: str,
    duration: str | int,
    namespaces: tuple[str, ...],
    nodes: tuple[str, ...],
    cloud_provider: str | None,
    cloud_config: str | None,
    node_group_auto_discovery: tuple[str, ...],
    aws_region: str,
    aws_endpoint_url: str,
) -> None:
    """Write a simulator scenario of the cluster: node groups, workloads, HPAs, PDBs, autoscalers.

    The scenario loads as written (`kubetide validate`, `kubetide simulate`); notes on stderr say what
    the API cannot tell (traffic, group bounds, CA's flags) and what was left out.
    """
    configure_quiet_logging()  # a library's warning never carries a credential
    client = _client(kubeconfig)
    cluster = _read(client)
    aws = (node_group_auto_discovery, aws_region, aws_endpoint_url)
    provider = _provider_groups(cloud_provider, cloud_config, nodes, aws, client, cluster)
    bounds = _bounds(nodes) if provider is None else {}
    options = ExportOptions(
        name=name,
        duration=duration,
        namespaces=frozenset(namespaces),
        bounds=bounds,
        catalog=frozenset(BUILTIN_CATALOG),
        provider=provider,
        initial_node_name=node_name,
    )
    export = build_scenario(cluster, options)
    groups = [g["name"] for g in export.document["spec"]["nodeGroups"]]
    unknown = sorted(set(bounds) - set(groups))
    if unknown:
        raise click.BadParameter(
            f"no node group {', '.join(map(repr, unknown))} in the cluster (found: {', '.join(groups) or 'none'})",
            param_hint="'--nodes'",
        )
    try:
        dropped = fit_to_loader(export.document, _check)
    except ExportError as exc:
        _fail(f"cannot write a loadable scenario: {exc}")
    text = yaml.safe_dump(export.document, sort_keys=False, allow_unicode=True, width=110)
    if output is None:
        click.echo(text, nl=False)
    else:
        try:
            with open(output, "w", encoding="utf-8") as out:
                out.write(text)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or exc}")
    for note in [*export.notes, *dropped]:
        click.echo(f"note: {note}", err=True)
    objects = export.document["spec"]["objects"]
    click.echo(
        f"{output or 'stdout'}: scenario {name!r}: {len(groups)} node group(s), {len(objects)} object(s)",
        err=True,
    )
