"""Go-style command lines, as Cluster Autoscaler, kube-controller-manager and Escalator take them.

The ``run`` commands keep their upstreams' flags, so a user can move a Deployment's ``args:`` over
unchanged: ``-flag`` and ``--flag`` alike, ``--flag=value`` or ``--flag value``, a bare ``--flag`` for a
bool (``--flag=false`` to turn one off), and repeatable flags (``--nodes`` twice). Flags that only tune
klog's output are accepted and reported back so the command can map them to its own logging; any other
unknown flag is a problem naming it, never silently dropped. Every problem of the line is collected.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["KLOG_FLAGS", "CommandLine", "tokenize"]

# klog / component-base logging flags upstream deployments pass. Values are kept for the logging setup.
KLOG_FLAGS: Mapping[str, bool] = {  # name -> is a bool flag
    "v": False,
    "vmodule": False,
    "logtostderr": True,
    "alsologtostderr": True,
    "stderrthreshold": False,
    "log-dir": False,
    "log_dir": False,
    "log-file": False,
    "log_file": False,
    "log-file-max-size": False,
    "log_file_max_size": False,
    "skip-headers": True,
    "skip_headers": True,
    "skip-log-headers": True,
    "skip_log_headers": True,
    "add-dir-header": True,
    "add_dir_header": True,
    "one-output": True,
    "one_output": True,
    "log-flush-frequency": False,
}


@dataclass
class CommandLine:
    """The flags found: each name maps to its values in order (a scalar flag's last one wins)."""

    values: dict[str, list[str]] = field(default_factory=dict)
    logging: dict[str, str] = field(default_factory=dict)  # klog flags seen
    problems: list[tuple[str, str]] = field(default_factory=list)  # (flag or argument, what is wrong)
    help: bool = False

    def last(self, name: str) -> str | None:
        seen = self.values.get(name)
        return seen[-1] if seen else None


def tokenize(argv: Iterable[str], bool_flags: Iterable[str], value_flags: Iterable[str]) -> CommandLine:
    """Split ``argv`` by the known flag names; unknown flags and stray arguments become problems."""
    bools = set(bool_flags)
    values = set(value_flags)
    known = sorted(bools | values)
    out = CommandLine()
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            out.problems += [(a, "unexpected argument: this command takes flags only") for a in args[i:]]
            break
        if not arg.startswith("-") or arg == "-":
            out.problems.append((arg, "unexpected argument: this command takes flags only"))
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if name in ("h", "help"):
            out.help = True
            continue
        is_bool = name in bools or KLOG_FLAGS.get(name, False)
        if name not in bools and name not in values and name not in KLOG_FLAGS:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean --{close[0]}?)" if close else ""
            out.problems.append((f"--{name}", f"unknown flag{hint}"))
            if not eq and i < len(args) and not args[i].startswith("-"):
                i += 1  # its value, most likely: do not report it as a stray argument too
            continue
        if not eq:
            if is_bool:
                value = "true"
            elif i < len(args):
                value = args[i]
                i += 1
            else:
                out.problems.append((f"--{name}", "needs a value"))
                continue
        if name in KLOG_FLAGS:
            out.logging[name] = value
        else:
            out.values.setdefault(name, []).append(value)
    return out
