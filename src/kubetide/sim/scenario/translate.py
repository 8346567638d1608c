"""Pydantic's errors, said the way a Kubernetes user reads them: ``spec.nodeGroups[1].maxSize: ...``.

Locations are walked along the model's types so that discriminated-union tags (pydantic puts the
``type`` value into the location) disappear from the path, and so that an unknown key can be answered
with the closest field name the model has. Messages become plain phrases ("is required", "must be an
integer, got 'x'") instead of pydantic's ("Input should be a valid integer").
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from kubetide.model.errors import FieldError
from kubetide.sim.scenario.base import PATTERN_HINTS
from kubetide.sim.scenario.paths import join

__all__ = ["translate_errors"]


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _union_members(annotation: Any) -> list[Any]:
    """The alternatives of a union, flattened (``Annotated[A | B, ...] | None`` -> ``[A, B]``)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [
            m for a in typing.get_args(annotation) if a is not type(None) for m in _union_members(_unwrap(a))
        ]
    return [annotation]


def _model_fields(cls: type[BaseModel]) -> dict[str, Any]:
    return {(info.alias or name): info.annotation for name, info in cls.model_fields.items()}


def _tag_of(member: Any) -> tuple[str, ...]:
    if isinstance(member, type) and issubclass(member, BaseModel) and "type" in member.model_fields:
        annotation = member.model_fields["type"].annotation
        if typing.get_origin(annotation) is typing.Literal:
            return tuple(str(a) for a in typing.get_args(annotation))
    return ()


def _step(annotation: Any, part: str | int) -> tuple[Any, bool]:
    """The type below ``annotation`` at ``part``, and whether ``part`` was a union tag."""
    members = _union_members(_unwrap(annotation))
    if len(members) > 1:
        for member in members:
            if isinstance(part, str) and part in _tag_of(member):
                return member, True
        return None, False
    current = members[0]
    origin = typing.get_origin(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return _model_fields(current).get(str(part)), False
    if origin is list and isinstance(part, int):
        return typing.get_args(current)[0], False
    if origin is dict:
        return typing.get_args(current)[1], False
    return None, False


def _known_fields(annotation: Any) -> list[str]:
    members = _union_members(_unwrap(annotation))
    if len(members) == 1 and isinstance(members[0], type) and issubclass(members[0], BaseModel):
        return list(_model_fields(members[0]))
    return []


def _unknown_noun(annotation: Any) -> str:
    members = _union_members(_unwrap(annotation))
    cls = members[0] if len(members) == 1 else None
    return str(getattr(cls, "unknown_key_noun", "field"))


def _message(err: ErrorDetails, parent: Any) -> tuple[str, str]:
    """(extra path suffix, message) for one pydantic error."""
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    got = f", got {_describe(value)}"
    simple = {
        "missing": "is required",
        "int_type": "must be an integer" + got,
        "int_parsing": "must be an integer" + got,
        "int_from_float": "must be an integer" + got,
        "float_type": "must be a number" + got,
        "float_parsing": "must be a number" + got,
        "finite_number": "must be a finite number" + got,
        "bool_type": "must be true or false" + got,
        "bool_parsing": "must be true or false" + got,
        "string_type": "must be a string" + got,
        "dict_type": "must be a mapping" + got,
        "model_type": "must be a mapping" + got,
        "model_attributes_type": "must be a mapping" + got,
        "list_type": "must be a list" + got,
        "string_pattern_mismatch": f"must be {PATTERN_HINTS.get(str(ctx.get('pattern')), 'like ' + str(ctx.get('pattern')))}"
        + got,
        "string_too_short": "must not be empty",
        "too_short": f"must have at least {ctx.get('min_length')} item(s)",
        "string_too_long": f"must be at most {ctx.get('max_length')} characters",
        "greater_than_equal": f"must be >= {_num(ctx.get('ge'))}" + got,
        "greater_than": f"must be > {_num(ctx.get('gt'))}" + got,
        "less_than_equal": f"must be <= {_num(ctx.get('le'))}" + got,
        "literal_error": f"must be one of {str(ctx.get('expected', '')).replace(' or ', ', ').replace(chr(39), '')}"
        + got,
        "frozen_instance": "cannot be changed",
    }
    if kind in simple:
        return "", simple[kind]
    if kind == "extra_forbidden":
        known = _known_fields(parent)
        name = str(err["loc"][-1]) if err["loc"] else ""
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        noun = _unknown_noun(parent)
        if close:
            return "", f"unknown {noun} (did you mean {close[0]!r}?)"
        return "", f"unknown {noun} (known: {', '.join(known)})" if known else f"unknown {noun}"
    if kind == "union_tag_invalid":
        return (
            ".type",
            f"must be one of {str(ctx.get('expected_tags', '')).replace(chr(39), '')}, got {ctx.get('tag')!r}",
        )
    if kind == "union_tag_not_found":
        tags = ", ".join(t for m in _union_members(_unwrap(parent)) for t in _tag_of(m))
        return ".type", f"is required (one of {tags})"
    if kind == "kubetide":
        return "", str(ctx.get("message", err["msg"]))
    message = err["msg"].removeprefix("Value error, ")
    return "", message[:1].lower() + message[1:]


def translate_errors(exc: ValidationError, root: type[BaseModel], prefix: str = "") -> list[FieldError]:
    """Every error of ``exc`` (raised validating ``root``) as a :class:`FieldError`."""
    out: list[FieldError] = []
    for err in exc.errors():
        annotation: Any = root
        parent: Any = None
        path = prefix
        for part in err["loc"]:
            if part == "[key]":  # the error is about a mapping key, already in the path
                annotation = None
                continue
            parent = annotation
            annotation, is_tag = _step(annotation, part) if annotation is not None else (None, False)
            if not is_tag:
                path = join(path, part)
        kind, value = err["type"], err.get("input")
        if kind in ("union_tag_not_found", "union_tag_invalid"):
            parent = annotation  # the union itself: its members name the tags
        suffix, message = _message(err, parent)
        if err["loc"] and err["loc"][-1] == "[key]":
            suffix, message = "", f"keys must be strings, got {_describe(value)}"
        elif kind == "union_tag_not_found" and not isinstance(value, dict):
            suffix, message = "", f"must be a mapping, got {_describe(value)}"
        out.append(FieldError(path + suffix, message))
    return out
