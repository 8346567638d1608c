"""Shared building blocks of the scenario model: the strict base class and the field types.

kubetide's own sections use :class:`SpecModel`: unknown keys are errors (with a "did you mean"), since a
typo silently ignored (``maxsize: 5``) would run a different experiment than the one written. Inside
Kubernetes manifests unknown fields are ignored, as the API server's decoder does for our views.
Models are strict (``"5"`` is not an integer) because YAML already gives real types; ``--set`` values
are parsed as YAML scalars for the same reason.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from kubetide.model.durations import DurationError, format_duration, parse_duration
from kubetide.model.numbers import INT64_MAX
from kubetide.model.quantity import Quantity, QuantityError, parse_quantity

__all__ = [
    "DNS_NAME",
    "FILE_NAME",
    "PATTERN_HINTS",
    "Duration",
    "NonNegativeInt",
    "ObjectRef",
    "QuantityValue",
    "ResourceMap",
    "SpecModel",
    "custom_error",
    "errors_at",
]


DNS_NAME = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
FILE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"

# Plain words for the patterns names must match, used in error messages instead of the regex.
PATTERN_HINTS: dict[str, str] = {
    DNS_NAME: "a lowercase DNS name (a-z, 0-9, '-' and '.', starting and ending alphanumeric)",
    FILE_NAME: "a name usable as a file name (letters, digits, '.', '_' and '-')",
}


def custom_error(message: str) -> PydanticCustomError:
    """A pydantic error whose message is exactly ``message`` (braces are not format fields)."""
    return PydanticCustomError("kubetide", "{message}", {"message": message})


def errors_at(title: str, problems: list[tuple[tuple[str | int, ...], str, Any]]) -> ValidationError:
    """Several errors at fields below the model being validated: ``[(("maxSize",), message, value)]``.

    Raised from an ``after`` validator, pydantic prefixes each location with the model's own, so a
    cross-field check can point at the field that is wrong rather than at the whole object.
    """
    details = [InitErrorDetails(type=custom_error(msg), loc=loc, input=value) for loc, msg, value in problems]
    return ValidationError.from_exception_data(title, details)


class SpecModel(BaseModel):
    """Base of every kubetide-owned section: strict, immutable, unknown keys rejected."""

    # What an unknown key is called in its error ("unknown field (did you mean 'maxSize'?)").
    unknown_key_noun: ClassVar[str] = "field"

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        arbitrary_types_allowed=True,
        populate_by_name=True,
        allow_inf_nan=False,  # an infinite rate, price or time has no meaning and breaks the arithmetic
    )


def _duration(value: Any) -> float:
    try:
        return parse_duration(value)
    except DurationError as exc:
        raise custom_error(str(exc)) from None


def _quantity(value: Any) -> Quantity:
    if isinstance(value, Quantity):
        return value
    try:
        quantity = parse_quantity(value)
    except QuantityError as exc:
        raise custom_error(str(exc)) from None
    if quantity.amount < 0:  # capacities, usages and rates: never negative
        raise custom_error(f"must not be negative, got {value!r}")
    if quantity.amount * 1000 > INT64_MAX:  # the scheduling vectors count int64 milli-units
        raise custom_error(
            f"too large: at most {INT64_MAX} milli-units (int64, Kubernetes' MilliValue()), got {value!r}"
        )
    return quantity


Duration = Annotated[float, BeforeValidator(_duration), PlainSerializer(format_duration)]
"""Seconds; written as ``90s``/``1h30m`` or a number of seconds."""

QuantityValue = Annotated[Quantity, PlainValidator(_quantity), PlainSerializer(str)]
"""A Kubernetes quantity, parsed exactly; a bad one is quoted in the error."""

ResourceMap = dict[str, QuantityValue]
"""``{cpu: 500m, memory: 1Gi, pods: 29}``: resource name to quantity."""

NonNegativeInt = Annotated[int, Field(ge=0)]

_REF = re.compile(
    r"^([A-Za-z][A-Za-z0-9]*)/(?:([a-z0-9]([-a-z0-9]*[a-z0-9])?)/)?([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$"
)


def parse_object_ref(value: Any) -> str:
    """``Kind/namespace/name`` (or ``Kind/name`` in ``default``), normalised to the three-part form."""
    if not isinstance(value, str):
        raise custom_error(f"must be a reference like Deployment/default/web, got {value!r}")
    match = _REF.match(value)
    if match is None:
        raise custom_error(
            f"must be a reference like Deployment/default/web (kind/namespace/name), got {value!r}"
        )
    kind, namespace, name = match.group(1), match.group(2) or "default", match.group(4)
    return f"{kind}/{namespace}/{name}"


ObjectRef = Annotated[str, PlainValidator(parse_object_ref)]
"""An object reference ``Kind/namespace/name``; ``Kind/name`` means the ``default`` namespace."""
