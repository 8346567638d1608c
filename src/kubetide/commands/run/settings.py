"""The live commands' own flags and the parse of a whole command line into typed values.

Each ``run`` component keeps its upstream's flag names and defaults (live contract §1); beside them
sit the flags every live component shares (cluster access, dry run, one-shot, logging, leader election
timings). A command line is checked as a whole: every unknown flag and bad value is reported at once
(exit 2), with the closest known name suggested.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubetide.cluster.flags import FlagSpec, parse_flags, value_from_text
from kubetide.commands.goflags import tokenize
from kubetide.commands.run.logs import library_log_level_flag
from kubetide.kube.http import parse_address
from kubetide.model.numbers import is_ascii_digits

__all__ = [
    "LeaderElection",
    "LiveSettings",
    "ParsedLine",
    "leader_flags",
    "leader_from",
    "live_flags",
    "parse_line",
    "settings_from",
]


def _positive(value: Any) -> str | None:
    return "must be > 0" if value <= 0 else None


def live_flags(*, dry_run_alias: str | None = None) -> list[FlagSpec]:
    """Flags every live component takes (CA names where CA has one)."""
    specs = [
        FlagSpec("kubeconfig", "string", "", "kubeconfig file; else $KUBECONFIG, ~/.kube/config, in-cluster"),
        FlagSpec(
            "dry-run", "bool", False, "watch and decide, change nothing; log and count what would be done"
        ),
        FlagSpec(
            "once", "bool", False, "run one loop (one reconcile of each HPA), print the decisions, exit"
        ),
        FlagSpec("logging-format", "string", "text", "text or json", choices=("text", "json")),
        library_log_level_flag(),
    ]
    if dry_run_alias:
        specs.append(FlagSpec(dry_run_alias, "bool", False, "same as --dry-run"))
    return specs


def leader_flags(
    *, enabled: bool, name_flag: str, name: str, namespace_flag: str | None, namespace: str
) -> list[FlagSpec]:
    """Leader election flags with client-go's default timings (15s / 10s / 2s)."""
    specs = [
        FlagSpec(
            "leader-elect", "bool", enabled, "run with leader election on a coordination.k8s.io/v1 Lease"
        ),
        FlagSpec(name_flag, "string", name, "the Lease's name"),
        FlagSpec(
            "leader-elect-lease-duration",
            "duration",
            15.0,
            "how long a standby waits after the last renewal before it takes the Lease",
            check=_positive,
        ),
        FlagSpec(
            "leader-elect-renew-deadline",
            "duration",
            10.0,
            "the leader stops acting if it cannot renew the Lease within this",
            check=_positive,
        ),
        FlagSpec(
            "leader-elect-retry-period",
            "duration",
            2.0,
            "how often the Lease is tried (standby) or renewed (leader)",
            check=_positive,
        ),
        FlagSpec(
            "leader-elect-resource-lock",
            "string",
            "leases",
            "the lock's kind: leases (client-go's other kinds are deprecated)",
            choices=("leases",),
        ),
    ]
    if namespace_flag:
        specs.append(FlagSpec(namespace_flag, "string", namespace, "the Lease's namespace"))
    return specs


@dataclass(frozen=True, slots=True)
class LeaderElection:
    enabled: bool
    name: str
    namespace: str
    lease_duration: float
    renew_deadline: float
    retry_period: float


def leader_from(values: Mapping[str, Any], *, name_flag: str, namespace: str) -> LeaderElection:
    """The leader election settings of a parsed line (the flags of :func:`leader_flags`)."""
    return LeaderElection(
        enabled=bool(values["leader-elect"]),
        name=str(values[name_flag]),
        namespace=namespace,
        lease_duration=float(values["leader-elect-lease-duration"]),
        renew_deadline=float(values["leader-elect-renew-deadline"]),
        retry_period=float(values["leader-elect-retry-period"]),
    )


@dataclass(frozen=True, slots=True)
class LiveSettings:
    """What every live component needs besides its own options."""

    component: str
    kubeconfig: str | None
    dry_run: bool
    once: bool
    logging_format: str  # "text" or "json"
    verbosity: int  # klog's -v: kubetide's own loggers
    address: str
    leader: LeaderElection
    library_log_level: str = "warning"  # botocore, httpx, lightkube, ...: independent of -v


@dataclass(frozen=True, slots=True)
class ParsedLine:
    values: dict[str, Any]  # every flag of the registry, typed (defaults filled in)
    problems: list[tuple[str, str]]
    logging: dict[str, str]
    help: bool
    given: frozenset[str] = frozenset()  # the flags the line names (the others have their defaults)


def parse_line(argv: Iterable[str], registry: Mapping[str, FlagSpec]) -> ParsedLine:
    """Typed values of every flag in ``registry`` (defaults where not given) and all problems."""
    bools = [name for name, spec in registry.items() if spec.kind == "bool"]
    others = [name for name, spec in registry.items() if spec.kind != "bool"]
    line = tokenize(argv, bools, others)
    raw = {name: value_from_text(registry[name], texts) for name, texts in line.values.items()}
    typed, problems = parse_flags(raw, registry)
    values = {name: spec.default for name, spec in registry.items()}
    values.update(typed)
    verbosity = line.logging.get("v", "0")
    if not is_ascii_digits(verbosity):
        problems.append(("v", f"must be a non-negative integer, got {verbosity!r}"))
    if "address" in values:  # the endpoint starts after the connection: its flag is checked now
        try:
            parse_address(str(values["address"]))
        except ValueError:
            problems.append(("address", f"must be host:port or :port, got {values['address']!r}"))
    return ParsedLine(values, [*line.problems, *problems], line.logging, line.help, frozenset(line.values))


def settings_from(
    component: str,
    parsed: ParsedLine,
    *,
    address: str,
    leader: LeaderElection,
    dry_run_alias: str | None = None,
) -> LiveSettings:
    v = parsed.values
    verbosity = parsed.logging.get("v", "0")
    return LiveSettings(
        component=component,
        kubeconfig=v["kubeconfig"] or None,
        dry_run=bool(v["dry-run"] or (dry_run_alias is not None and v[dry_run_alias])),
        once=bool(v["once"]),
        logging_format=str(v["logging-format"]),
        verbosity=int(verbosity) if is_ascii_digits(verbosity) else 0,
        address=address,
        leader=leader,
        library_log_level=str(v["library-log-level"]),
    )
