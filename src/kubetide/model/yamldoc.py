"""YAML as users' files should be read: a key given twice in one mapping is an error, not "the last one
wins" (PyYAML's default, which silently runs something else than half of what the user wrote).

Every duplicate of a document is reported at once, with its line and the line of the first occurrence.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

__all__ = ["DuplicateKeyError", "YamlDocumentError", "load_documents", "safe_load", "safe_load_all"]


class DuplicateKeyError(yaml.YAMLError):
    def __init__(self, duplicates: list[str]) -> None:
        super().__init__("; ".join(duplicates))
        self.duplicates = duplicates


class _StrictLoader(yaml.SafeLoader):
    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.found: list[tuple[int, int, str]] = []

    @property
    def duplicates(self) -> list[str]:
        return [text for _, _, text in sorted(self.found)]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<" merges may repeat keys on purpose
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            line = key_node.start_mark.line + 1
            if first is not None:
                column = key_node.start_mark.column + 1
                text = f"line {line}, column {column}: duplicate key {key!r} (first at line {first})"
                self.found.append((line, column, text))
            else:
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def safe_load(text: str) -> Any:
    """``yaml.safe_load``, raising DuplicateKeyError (a YAMLError) listing every repeated key."""
    loader = _StrictLoader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.duplicates:
        raise DuplicateKeyError(loader.duplicates)
    return data


def safe_load_all(text: str) -> list[Any]:
    loader = _StrictLoader(text)
    try:
        docs = []
        while loader.check_data():  # type: ignore[no-untyped-call]
            docs.append(loader.get_data())
    finally:
        loader.dispose()
    if loader.duplicates:
        raise DuplicateKeyError(loader.duplicates)
    return docs


class YamlDocumentError(ValueError):
    """A file that is not YAML (or JSON) kubetide can read: every problem, each ``name:line:column: ...``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def load_documents(text: str, name: str, *, multi: bool = False, json_syntax: bool = False) -> list[Any]:
    """The documents of a user's file (one unless ``multi``; empty documents of a stream left out), or
    :class:`YamlDocumentError` naming where and what: a syntax error with its line and column, every
    duplicated key, a value YAML cannot build (a date like 2024-13-01), nesting too deep. The one
    reader for every file a user hands kubetide, so each is read and reported alike, never a traceback.
    """
    if json_syntax:
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as exc:
            raise YamlDocumentError([f"{name}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"]) from None
        except RecursionError:
            raise YamlDocumentError([f"{name}: invalid JSON: nested too deeply"]) from None
    try:
        if multi:
            return [doc for doc in safe_load_all(text) if doc is not None]
        return [safe_load(text)]
    except DuplicateKeyError as exc:
        raise YamlDocumentError([f"{name}: {d}" for d in exc.duplicates]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark is not None else name
        raise YamlDocumentError(
            [f"{where}: invalid YAML: {exc.problem or exc.context or 'syntax error'}"]
        ) from None
    except yaml.YAMLError as exc:
        raise YamlDocumentError([f"{name}: invalid YAML: {exc}"]) from None
    except (ValueError, OverflowError, TypeError) as exc:  # a timestamp out of range, an unhashable key
        raise YamlDocumentError([f"{name}: invalid YAML: {exc}"]) from None
    except RecursionError:
        raise YamlDocumentError([f"{name}: invalid YAML: nested too deeply"]) from None
