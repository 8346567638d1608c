"""``--help`` for the live commands: the component's flags with their defaults, as its upstream lists them."""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.cluster.flags import FlagSpec
from kubetide.model.durations import format_duration

__all__ = ["render_help"]


def _default(spec: FlagSpec) -> str:
    if spec.kind == "duration":
        return format_duration(float(spec.default))
    if spec.kind == "bool":
        return "true" if spec.default else "false"
    if spec.kind in ("list", "multi"):
        return ",".join(spec.default) if spec.default else '""'
    return '""' if spec.default == "" else str(spec.default)


def render_help(usage: str, intro: str, registry: Mapping[str, FlagSpec]) -> str:
    lines = [
        f"Usage: {usage}",
        "",
        intro,
        "",
        "Flags (Go style: --flag=value, --flag value, -flag; bools: --flag, --flag=false):",
    ]
    for name in sorted(registry):
        spec = registry[name]
        value = "" if spec.kind == "bool" else f" {spec.kind}"
        lines.append(f"  --{name}{value}")
        about = spec.help + (" " if spec.help else "") + f"(default {_default(spec)})"
        if spec.choices:
            about += f"; one of {', '.join(spec.choices)}"
        lines.append(f"        {about}")
    lines += [
        "",
        "klog's logging flags (--v, --logtostderr, --stderrthreshold, ...) are accepted: --v=4 and up logs debug lines.",
    ]
    return "\n".join(lines)
