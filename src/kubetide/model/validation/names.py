"""The string rules of ``k8s.io/apimachinery/pkg/util/validation``: which names, label keys and values,
config keys and path segments the API server accepts, with its messages.

Each check returns the messages the API server would give (empty: valid), word for word, so a user who
knows ``kubectl``'s errors recognises them. Lengths are in bytes, as Go's ``len``. The regular
expressions are matched whole (``fullmatch``: Python's ``$`` would also match before a final newline).
Results are cached: a file's labels repeat on every object.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "config_map_key",
    "dns1123_label",
    "dns1123_subdomain",
    "label_value",
    "path_segment_name",
    "percent",
    "qualified_name",
]

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME = re.compile(_QNAME_FMT)
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character"
)
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY = re.compile(_CONFIG_KEY_FMT)
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_PERCENT = re.compile("[0-9]+%")

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError``."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(limit: int) -> str:
    return f"must be no more than {limit} characters"


def _size(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


@lru_cache(maxsize=8192)
def dns1123_label(value: str) -> tuple[str, ...]:
    """``IsDNS1123Label``: namespaces, container names."""
    errs = []
    if _size(value) > DNS1123_LABEL_MAX:
        errs.append(_max_len(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL.fullmatch(value):
        errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def dns1123_subdomain(value: str) -> tuple[str, ...]:
    """``IsDNS1123Subdomain``: the names of most objects."""
    errs = []
    if _size(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(_max_len(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def qualified_name(value: str) -> tuple[str, ...]:
    """``IsQualifiedName``: label and annotation keys, an optional DNS subdomain prefix and ``/``."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += [f"prefix part {msg}" for msg in dns1123_subdomain(prefix)]
    else:
        return (
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errs.append("name part must be non-empty")
    elif _size(name) > QUALIFIED_NAME_MAX:
        errs.append(f"name part {_max_len(QUALIFIED_NAME_MAX)}")
    if not _QNAME.fullmatch(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def label_value(value: str) -> tuple[str, ...]:
    """``IsValidLabelValue``: empty, or at most 63 characters of ``[-A-Za-z0-9_.]`` starting and
    ending alphanumeric."""
    errs = []
    if _size(value) > LABEL_VALUE_MAX:
        errs.append(_max_len(LABEL_VALUE_MAX))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errs)


@lru_cache(maxsize=1024)
def config_map_key(value: str) -> tuple[str, ...]:
    """``IsConfigMapKey``."""
    errs = []
    if _size(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(_max_len(DNS1123_SUBDOMAIN_MAX))
    if not _CONFIG_KEY.fullmatch(value):
        errs.append(_regex_error(_CONFIG_KEY_MSG, _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return tuple(errs)


def path_segment_name(value: str) -> tuple[str, ...]:
    """``IsValidPathSegmentName``: a name used in a URL path (an HPA's target, a metric name)."""
    if value in (".", ".."):
        return (f"may not be '{value}'",)
    return tuple(f"may not contain '{c}'" for c in ("/", "%") if c in value)


def percent(value: str) -> tuple[str, ...]:
    """``IsValidPercent``."""
    if _PERCENT.fullmatch(value):
        return ()
    return (
        _regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'",
            "[0-9]+%",
            "1%",
            "93%",
        ),
    )
