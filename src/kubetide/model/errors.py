"""Errors that name the field path of a bad value, so a user can find it in their manifest."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FieldError", "ManifestError", "join_path"]

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def join_path(path: str, key: str | int) -> str:
    """``path`` one level down: ``a.b``, ``a[0]``, or ``a["app.kubernetes.io/name"]`` for a key that is
    not a plain name (a dot, a slash or a space in it), as users write paths in kubetide."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if not _PLAIN.fullmatch(key):
        escaped = key.replace("\\", "\\\\").replace('"', '\\"')
        return f'{path}["{escaped}"]'
    return f"{path}.{key}" if path else key


@dataclass(frozen=True)
class FieldError:
    """One problem at one place: ``spec.metrics[0].resource.target.averageUtilization: must be an integer``."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ManifestError(ValueError):
    """A manifest (or a scenario, or a snapshot) that cannot be read; carries every problem found."""

    def __init__(self, errors: list[FieldError] | FieldError) -> None:
        self.errors: list[FieldError] = [errors] if isinstance(errors, FieldError) else list(errors)
        super().__init__("; ".join(str(e) for e in self.errors))

    @classmethod
    def at(cls, path: str, message: str) -> ManifestError:
        return cls(FieldError(path, message))
