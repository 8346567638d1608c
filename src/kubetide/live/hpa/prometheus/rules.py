"""prometheus-adapter's rules file (``--prometheus-rules``), the subset users write most, checked whole.

Supported, with the adapter's meaning:

- ``rules:`` (custom metrics: per pod and per object) and ``externalRules:`` (external metrics), each
  a list of rules with ``seriesQuery`` (required), ``seriesFilters`` (``is`` / ``isNot`` regexes),
  ``resources`` (``overrides: {LABEL: {group, resource}}`` and/or ``template`` with ``<<.Group>>`` and
  ``<<.Resource>>``; ``namespaced: false`` on external rules), ``name`` (``matches`` regex, ``as``
  with ``$1`` / ``${1}`` / ``${name}``; defaults as the adapter's: ``$0`` without a capture group,
  ``$1`` with one) and ``metricsQuery`` (required), a template with ``<<.Series>>``,
  ``<<.LabelMatchers>>`` and ``<<.GroupBy>>``.

Not supported, so an error naming its field path rather than a silently different behaviour:
``resourceRules`` (CPU and memory use kubetide's default queries), any other key, and any other
template action (``<<range ...>>``, ``<<.LabelValuesByName>>``, ``<<.GroupBySlice>>``, pipelines).
Every problem of the file is reported at once (:class:`RulesError`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubetide.live.hpa.kinds import KNOWN_KINDS
from kubetide.model import yamldoc
from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.numbers import is_ascii_digits

__all__ = ["ResourceMapping", "Rule", "RulesConfig", "RulesError", "load_rules", "parse_rules", "singular"]

_ACTION = re.compile(r"<<-?\s*(.*?)\s*-?>>")
_QUERY_ACTIONS = (".Series", ".LabelMatchers", ".GroupBy")
_TEMPLATE_ACTIONS = (".Group", ".Resource")
_RULE_KEYS = ("seriesQuery", "seriesFilters", "resources", "name", "metricsQuery")
_PLURALS = {gr.resource: kind.lower() for kind, gr in KNOWN_KINDS.items()}


class RulesError(ManifestError):
    """The rules file has problems; ``errors`` lists every one with its field path."""


def singular(resource: str) -> str:
    """A resource name as the adapter's templates and overrides compare them: lower-case singular."""
    lower = resource.lower()
    if lower in _PLURALS:
        return _PLURALS[lower]
    return lower[:-1] if lower.endswith("s") and lower[:-1] in _PLURALS.values() else lower


@dataclass(frozen=True)
class ResourceMapping:
    """Which series label holds the name of which Kubernetes resource."""

    overrides: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # label -> (group, singular)
    template: str = ""
    namespaced: bool = True  # external rules only: whether the namespace label is matched

    def label_for(self, group: str, resource: str) -> str | None:
        wanted = (group, singular(resource))
        for label, mapped in self.overrides.items():
            if mapped == wanted or (not mapped[0] and mapped[1] == wanted[1]):
                return label
        if self.template:
            return self.template.replace("<<.Group>>", group).replace("<<.Resource>>", wanted[1])
        return None


@dataclass(frozen=True)
class Rule:
    path: str  # "rules[0]": where the rule is, for messages
    series_query: str
    metrics_query: str
    resources: ResourceMapping
    name_matches: re.Pattern[str]
    name_as: str
    filters: tuple[tuple[bool, re.Pattern[str]], ...] = ()  # (must match, regex)

    def metric_name(self, series: str) -> str | None:
        """The metric name the rule gives ``series`` (None: filtered out or not matched)."""
        if any(bool(rx.search(series)) != keep for keep, rx in self.filters):
            return None
        match = self.name_matches.search(series)
        return _expand(self.name_as, match) if match else None

    def render(self, series: str, label_matchers: str, group_by: str) -> str:
        return _ACTION.sub(
            lambda m: {".Series": series, ".LabelMatchers": label_matchers, ".GroupBy": group_by}[m.group(1)],
            self.metrics_query,
        )


@dataclass(frozen=True)
class RulesConfig:
    rules: tuple[Rule, ...] = ()
    external_rules: tuple[Rule, ...] = ()


def load_rules(path: str) -> RulesConfig:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RulesError(FieldError("", f"{path}: {exc.strerror or exc}")) from None
    except UnicodeDecodeError:
        raise RulesError(FieldError("", f"{path}: not UTF-8 text")) from None
    try:
        (data,) = yamldoc.load_documents(text, path)
    except yamldoc.YamlDocumentError as exc:
        raise RulesError([FieldError("", problem) for problem in exc.problems]) from None
    return parse_rules(data)


def parse_rules(data: Any) -> RulesConfig:
    errors: list[FieldError] = []
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RulesError(FieldError("", "must be a mapping with rules: and/or externalRules:"))
    for key in data:
        if key == "resourceRules":
            errors.append(FieldError(key, "not supported: CPU and memory use kubetide's default queries"))
        elif key not in ("rules", "externalRules"):
            errors.append(FieldError(str(key), "unknown field (supported: rules, externalRules)"))
    rules = _rule_list(data.get("rules"), "rules", False, errors)
    external = _rule_list(data.get("externalRules"), "externalRules", True, errors)
    if errors:
        raise RulesError(errors)
    return RulesConfig(rules, external)


def _rule_list(value: Any, path: str, external: bool, errors: list[FieldError]) -> tuple[Rule, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        errors.append(FieldError(path, "must be a list of rules"))
        return ()
    out = []
    for i, item in enumerate(value):
        rule = _rule(item, f"{path}[{i}]", external, errors)
        if rule is not None:
            out.append(rule)
    return tuple(out)


def _rule(item: Any, path: str, external: bool, errors: list[FieldError]) -> Rule | None:
    before = len(errors)
    if not isinstance(item, dict):
        errors.append(FieldError(path, "must be a mapping"))
        return None
    for key in item:
        if key not in _RULE_KEYS:
            errors.append(FieldError(f"{path}.{key}", f"unknown field (supported: {', '.join(_RULE_KEYS)})"))
    series_query = _string(item, "seriesQuery", path, errors, required=True)
    metrics_query = _string(item, "metricsQuery", path, errors, required=True)
    _check_template(metrics_query, f"{path}.metricsQuery", _QUERY_ACTIONS, errors)
    filters = _filters(item.get("seriesFilters"), f"{path}.seriesFilters", errors)
    resources = _resources(item.get("resources"), f"{path}.resources", external, errors)
    matches, name_as = _name(item.get("name"), f"{path}.name", errors)
    if len(errors) > before or matches is None:
        return None
    return Rule(path, series_query, metrics_query, resources, matches, name_as, filters)


def _string(
    item: dict[str, Any], key: str, path: str, errors: list[FieldError], *, required: bool = False
) -> str:
    value = item.get(key)
    if value is None:
        if required:
            errors.append(FieldError(f"{path}.{key}", "is required"))
        return ""
    if not isinstance(value, str):
        errors.append(FieldError(f"{path}.{key}", f"must be a string, got {value!r}"))
        return ""
    return value


def _check_template(text: str, path: str, allowed: tuple[str, ...], errors: list[FieldError]) -> None:
    for action in _ACTION.findall(text):
        if action not in allowed:
            errors.append(
                FieldError(
                    path,
                    f"unsupported template action <<{action}>> (supported: {', '.join(f'<<{a}>>' for a in allowed)})",
                )
            )


def _regex(text: str, path: str, errors: list[FieldError]) -> re.Pattern[str] | None:
    try:
        return re.compile(text)
    except re.error as exc:
        errors.append(FieldError(path, f"invalid regular expression {text!r}: {exc}"))
        return None


def _filters(value: Any, path: str, errors: list[FieldError]) -> tuple[tuple[bool, re.Pattern[str]], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        errors.append(FieldError(path, "must be a list of {is: REGEX} or {isNot: REGEX}"))
        return ()
    out = []
    for i, f in enumerate(value):
        here = f"{path}[{i}]"
        if not isinstance(f, dict) or len(f) != 1 or next(iter(f)) not in ("is", "isNot"):
            errors.append(FieldError(here, "must be {is: REGEX} or {isNot: REGEX}"))
            continue
        key, text = next(iter(f.items()))
        rx = _regex(str(text), f"{here}.{key}", errors)
        if rx is not None:
            out.append((key == "is", rx))
    return tuple(out)


def _resources(value: Any, path: str, external: bool, errors: list[FieldError]) -> ResourceMapping:
    if value is None:
        return ResourceMapping(namespaced=False) if external else ResourceMapping()
    if not isinstance(value, dict):
        errors.append(FieldError(path, "must be a mapping with overrides: and/or template:"))
        return ResourceMapping()
    allowed = ("overrides", "template", "namespaced") if external else ("overrides", "template")
    for key in value:
        if key not in allowed:
            errors.append(FieldError(f"{path}.{key}", f"unknown field (supported: {', '.join(allowed)})"))
    overrides: dict[str, tuple[str, str]] = {}
    raw = value.get("overrides") or {}
    if not isinstance(raw, dict):
        errors.append(FieldError(f"{path}.overrides", "must map labels to {group, resource}"))
        raw = {}
    for label, target in raw.items():
        here = f"{path}.overrides.{label}"
        if not isinstance(target, dict) or not isinstance(target.get("resource"), str):
            errors.append(FieldError(here, "must be {resource: NAME} with an optional group"))
            continue
        for key in target:
            if key not in ("group", "resource"):
                errors.append(FieldError(f"{here}.{key}", "unknown field (supported: group, resource)"))
        overrides[str(label)] = (str(target.get("group") or ""), singular(target["resource"]))
    template = _string(value, "template", path, errors)
    _check_template(template, f"{path}.template", _TEMPLATE_ACTIONS, errors)
    namespaced = value.get("namespaced", "namespace" in overrides or bool(template) or not external)
    if not isinstance(namespaced, bool):
        errors.append(FieldError(f"{path}.namespaced", f"must be true or false, got {namespaced!r}"))
        namespaced = True
    return ResourceMapping(overrides, template, namespaced)


def _name(value: Any, path: str, errors: list[FieldError]) -> tuple[re.Pattern[str] | None, str]:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        errors.append(FieldError(path, "must be a mapping with matches: and as:"))
        return None, ""
    for key in value:
        if key not in ("matches", "as"):
            errors.append(FieldError(f"{path}.{key}", "unknown field (supported: matches, as)"))
    matches = _regex(_string(value, "matches", path, errors) or ".*", f"{path}.matches", errors)
    name_as = _string(value, "as", path, errors)
    if matches is not None and not name_as:
        if matches.groups == 0:
            name_as = "$0"
        elif matches.groups == 1:
            name_as = "$1"
        else:
            errors.append(
                FieldError(f"{path}.as", "is required when name.matches has more than one capture group")
            )
    return matches, name_as


_GO_EXPAND = re.compile(r"\$\$|\$\{(\w+)\}|\$(\w+)")


def _expand(template: str, match: re.Match[str]) -> str:
    """Go's ``Regexp.ExpandString``: ``$1``, ``${1}``, ``$name``, ``$$``; unknown groups are empty."""

    def group(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name is None:
            return "$"
        try:
            value = match.group(int(name)) if is_ascii_digits(name) else match.group(name)
        except IndexError:  # re's answer for an unknown group name or number
            return ""
        return value or ""

    return _GO_EXPAND.sub(group, template)
