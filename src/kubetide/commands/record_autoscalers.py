"""Which autoscalers a recorded day replays, and with which settings: their command lines.

A recording replays the autoscalers that ran: their flags are read from the command line they ran
with, given to ``kubetide record`` (``--ca-flags``, ``--hpa-flags``, ``--escalator-flags``, each one
string as it would follow ``kubetide run COMPONENT``), or else found in the cluster: a Deployment
running ``kubetide run cluster-autoscaler | hpa | escalator`` (deploy/'s), or upstream's Cluster
Autoscaler (an image or command named ``cluster-autoscaler``). The line is parsed by the component's
own flag registry (``kubetide run``'s), so it means what it meant there; what a scenario cannot take is
dropped and said in a note (the process' own flags: address, leader election, logging; the cloud
provider's: the scenario's groups are recorded from it), and so is what the line got wrong.

The cloud flags of the cluster autoscaler's line (``--cloud-provider``, ``--cloud-config``, ``--nodes``,
``--node-group-auto-discovery``, AWS region and endpoint) are the recording's provider flags when
``record`` is not given its own; likewise the HPA's ``--prometheus-url`` and
``--prometheus-rate-window``, so the metrics are recorded as the HPA read them.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetide.cluster.flags import CA_FLAGS, SCENARIO_UNSUPPORTED, FlagSpec, parse_flags, value_from_text
from kubetide.commands.goflags import tokenize
from kubetide.commands.run import cluster_autoscaler as run_ca
from kubetide.commands.run import escalator as run_escalator
from kubetide.commands.run import hpa as run_hpa
from kubetide.hpa.flags import HPA_FLAGS

__all__ = ["Autoscalers", "found_in_cluster", "read_autoscalers", "split_flags"]

Json = dict[str, Any]
COMPONENTS = ("cluster-autoscaler", "hpa", "escalator")
_PROCESS_FLAGS = ("address", "kubeconfig", "dry-run", "once", "logging-format", "library-log-level")
_CA_PROVIDER_FLAGS = (
    "cloud-provider",
    "cloud-config",
    "nodes",
    "node-group-auto-discovery",
    "aws-region",
    "aws-endpoint-url",
)


def split_flags(text: str) -> list[str]:
    """A flags string as a shell would split it (``--nodes=0:5:general --scan-interval=10s``)."""
    return shlex.split(text)


@dataclass
class Autoscalers:
    """``spec.autoscalers`` of the recording and what else the lines said."""

    section: Json = field(default_factory=dict)
    managed_by_ca: tuple[str, ...] | None = None  # --nodes' groups; None: every group of the provider
    escalator_groups: tuple[str, ...] = ()
    provider_flags: dict[str, Any] = field(default_factory=dict)  # from the CA line
    metrics_flags: dict[str, Any] = field(default_factory=dict)  # from the HPA line
    notes: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (flag, problem): exit 2 when given


def _given(
    argv: Sequence[str], registry: Mapping[str, FlagSpec]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The flags ``argv`` gives (as scenario values) and every problem of the line."""
    bools = [name for name, spec in registry.items() if spec.kind == "bool"]
    line = tokenize(argv, bools, [name for name in registry if name not in bools])
    raw = {name: value_from_text(registry[name], texts) for name, texts in line.values.items()}
    _, problems = parse_flags(raw, registry)
    bad = {name for name, _ in problems}
    found = [(flag.lstrip("-"), problem) for flag, problem in [*line.problems, *problems]]
    return {k: v for k, v in raw.items() if k not in bad}, found


def _typed(values: Mapping[str, Any], registry: Mapping[str, FlagSpec]) -> dict[str, Any]:
    """Flag values as their kinds read them (durations in seconds)."""
    typed, _ = parse_flags(values, registry)
    return typed


def _dropped(component: str, names: Iterable[str], why: str) -> list[str]:
    listed = sorted(names)
    return [f"{component}: --{', --'.join(listed)} not in the scenario ({why})"] if listed else []


def ca_settings(argv: Sequence[str], where: str, out: Autoscalers) -> None:
    given, problems = _given(argv, run_ca.REGISTRY)
    out.problems += [(f"ca-flags --{flag}", problem) for flag, problem in problems]
    out.notes += [f"{where}: --{flag}: {problem}; left out" for flag, problem in problems]
    out.provider_flags = _typed({k: given[k] for k in _CA_PROVIDER_FLAGS if k in given}, run_ca.REGISTRY)
    flags = {k: v for k, v in given.items() if k in CA_FLAGS and k not in SCENARIO_UNSUPPORTED}
    process = [k for k in flags if k in _PROCESS_FLAGS or k.startswith("leader-elect")]
    for name in process:
        del flags[name]
    _, refused = parse_flags(flags, scenario=True)
    for name, problem in refused:
        flags.pop(name, None)
        out.notes.append(f"{where}: --{name}: {problem}; left out")
    out.notes += _dropped(where, process, "the process' own flags")
    out.notes += _dropped(
        where,
        [k for k in given if k not in CA_FLAGS and k not in _CA_PROVIDER_FLAGS]
        + [k for k in given if k in SCENARIO_UNSUPPORTED],
        "live mode's own; the node groups are recorded from the provider",
    )
    out.section["clusterAutoscaler"] = {"enabled": True, "flags": flags}
    nodes = flags.get("nodes")
    out.managed_by_ca = (
        tuple(str(n).split(":", 2)[-1] for n in nodes) if isinstance(nodes, list) and nodes else None
    )


def hpa_settings(argv: Sequence[str], where: str, out: Autoscalers) -> None:
    given, problems = _given(argv, run_hpa.REGISTRY)
    out.problems += [(f"hpa-flags --{flag}", problem) for flag, problem in problems]
    out.notes += [f"{where}: --{flag}: {problem}; left out" for flag, problem in problems]
    names = {f.name for f in HPA_FLAGS}
    out.section["hpa"] = {"enabled": True, "flags": {k: v for k, v in given.items() if k in names}}
    metrics = ("prometheus-url", "prometheus-rate-window")
    out.metrics_flags = _typed({k: given[k] for k in metrics if k in given}, run_hpa.REGISTRY)
    others = [k for k in given if k not in names and k not in out.metrics_flags]
    out.notes += _dropped(where, others, "live mode's own")


def escalator_settings(
    argv: Sequence[str], where: str, node_groups: list[Any] | None, out: Autoscalers
) -> None:
    given, problems = _given(argv, run_escalator.REGISTRY)
    out.problems += [(f"escalator-flags --{flag}", problem) for flag, problem in problems]
    out.notes += [f"{where}: --{flag}: {problem}; left out" for flag, problem in problems]
    if node_groups is None:
        out.notes.append(
            f"{where}: its node groups file ({given.get('nodegroups', '--nodegroups')}) is in its pod, not "
            "readable here: give it to record with --escalator-nodegroups FILE; the batch autoscaler is not "
            "replayed"
        )
        return
    section: Json = {"enabled": True, "nodeGroups": node_groups}
    if "scaninterval" in given:
        section["scanInterval"] = given["scaninterval"]
    if given.get("drymode") or given.get("dry-run"):
        section["drymode"] = True
    out.section["escalator"] = section
    out.escalator_groups = tuple(
        str(g.get("cloud_provider_group_name")) for g in node_groups if isinstance(g, dict)
    )
    out.notes += _dropped(
        where,
        [k for k in given if k not in ("scaninterval", "drymode", "dry-run", "nodegroups")],
        "live mode's own",
    )


def found_in_cluster(deployments: Iterable[Mapping[str, Any]]) -> dict[str, tuple[list[str], str]]:
    """The autoscalers' command lines in the cluster's Deployments: component -> (flags, where)."""
    found: dict[str, tuple[list[str], str]] = {}
    for deployment in deployments:
        meta = deployment.get("metadata") or {}
        where = f"Deployment {meta.get('namespace', 'default')}/{meta.get('name')}"
        containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
            "containers"
        ) or []
        for container in containers:
            argv = [str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])]]
            for i in range(len(argv) - 1):
                if argv[i] == "run" and argv[i + 1] in COMPONENTS:
                    found.setdefault(argv[i + 1], (argv[i + 2 :], where))
                    break
            else:
                image = str(container.get("image", ""))
                if "cluster-autoscaler" in image.rsplit("/", 1)[-1] or (
                    argv and argv[0].endswith("cluster-autoscaler")
                ):
                    flags = [a for a in argv if a.startswith("-")]
                    found.setdefault(
                        "cluster-autoscaler", (flags, f"{where} (upstream's Cluster Autoscaler)")
                    )
    return found


def read_autoscalers(
    given: Mapping[str, str | None],
    in_cluster: Mapping[str, tuple[list[str], str]],
    escalator_node_groups: list[Any] | None,
) -> Autoscalers:
    """The settings from the lines given (``given[component]``: a flags string) or else found."""
    out = Autoscalers()
    for component in COMPONENTS:
        text = given.get(component)
        if text is not None:
            argv, where = (
                split_flags(text),
                f"--{'ca' if component == 'cluster-autoscaler' else component}-flags",
            )
        elif component in in_cluster:
            argv, where = in_cluster[component]
            out.notes.append(f"{component}: replayed with the flags of {where}")
        else:
            continue
        before = len(out.problems)
        if component == "cluster-autoscaler":
            ca_settings(argv, where, out)
        elif component == "hpa":
            hpa_settings(argv, where, out)
        else:
            escalator_settings(argv, where, escalator_node_groups, out)
        if text is None:
            del out.problems[before:]  # a line found in the cluster is taken as far as it goes
    if "clusterAutoscaler" not in out.section:
        out.notes.append(
            "no cluster autoscaler found (give --ca-flags): node count changes are replayed as they "
            "happened (resizeGroup actions), not decided"
        )
    return out
